// Command gencorpus writes a benchmark corpus of Karpenter manifests:
//
//	go run ./hack/gencorpus -n 10000 -dir /tmp/corpus
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
)

func main() {
	n := flag.Int("n", 10000, "number of objects (half EC2NodeClasses, half NodePools)")
	per := flag.Int("per-file", 100, "documents per file")
	dir := flag.String("dir", "", "directory to write into (created)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "gencorpus: -dir is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(2)
	}
	if err := corpus.Write(*dir, *n, *per); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(2)
	}
}
