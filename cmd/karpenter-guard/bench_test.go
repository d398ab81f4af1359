package main

import (
	"io"
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
)

// BenchmarkCheck10k runs `check -o json` end to end (read, parse, evaluate, render) on 10,000 objects in
// 100 files (target: under 2 s).
func BenchmarkCheck10k(b *testing.B) {
	dir := b.TempDir()
	if err := corpus.Write(dir, 10000, 100); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if code := run([]string{"check", "-f", dir, "-o", "json"}, strings.NewReader(""), io.Discard, io.Discard); code != 1 {
			b.Fatalf("exit %d, want 1 (the corpus has deny findings)", code)
		}
	}
}
