package settings

import (
	"crypto/sha256"
	"os"
	"testing"
)

// BenchmarkFileLook is what the watch does every 2 s while the settings
// file has not changed: read it and take its digest (the example file).
func BenchmarkFileLook(b *testing.B) {
	for b.Loop() {
		data, _, err := readFile("../docs/settings.example.yaml")
		if err != nil {
			b.Fatal(err)
		}
		_ = sha256.Sum256(data)
	}
}

// BenchmarkParseFile is what a changed file costs (and the start): the
// example file parsed and checked whole.
func BenchmarkParseFile(b *testing.B) {
	data, err := os.ReadFile("../docs/settings.example.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
