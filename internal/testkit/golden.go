package testkit

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag of every test binary that imports testkit:
// go test -update rewrites the golden files, through Golden or a
// package's own check (such a package reads this flag, and defines none).
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Golden compares got with the golden file at path; under -update it
// rewrites the file instead, so a deliberate change is one command away.
func Golden(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update accepts it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}
