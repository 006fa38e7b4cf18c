package memory

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/store"
)

// BenchmarkInstructions: what the kernel pays before every turn of a live
// session to learn whether the channel's facts changed (thread.Instructor):
// one read of the real store, the section made. With none, and with the
// most a channel may keep (50 facts of 500 characters).
func BenchmarkInstructions(b *testing.B) {
	for _, n := range []int{0, store.MaxFacts} {
		b.Run(fmt.Sprintf("facts=%d", n), func(b *testing.B) {
			st, err := store.Open(b.Context(), b.TempDir()+"/claudeops.db")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			p, _ := partIn(New(Config{Facts: st}), "C1")
			for i := range n {
				f := store.Fact{ChannelKey: p.key(), Text: fmt.Sprintf("%02d %s", i, strings.Repeat("f", store.MaxFactChars-3))}
				if _, err := st.AddFact(b.Context(), f); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if len(p.Instructions(ctx)) < n*store.MaxFactChars {
					b.Fatal("facts missing")
				}
			}
		})
	}
}
