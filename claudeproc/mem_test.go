package claudeproc

import "runtime"

type runtimeMem struct{ totalAlloc uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.totalAlloc = s.TotalAlloc
}
