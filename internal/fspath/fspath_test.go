package fspath

import "testing"

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		p, dir string
		in     bool
	}{
		{"/work", "/work", true},
		{"/work/a", "/work", true},
		{"/work/", "/work", true},
		{"/work/a/..", "/work", true},
		{"/work/..", "/work", false},
		{"/work2", "/work", false},
		{"/work2/a", "/work", false},
		{"/wor", "/work", false},
		{"/", "/work", false},
		{"/work", "/", true},
		{"/", "/", true},
		{"/a/..b", "/a", true},
		{"/a/../b", "/a", false},
	} {
		if got := Within(tt.p, tt.dir); got != tt.in {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.p, tt.dir, got, tt.in)
		}
	}
}
