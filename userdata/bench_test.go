package userdata

import (
	"strings"
	"testing"

	"github.com/karpenter-guard/karpenter-guard/internal/corpus"
)

// BenchmarkParse measures parsing one AL2023 MIME userData with a NodeConfig part, the heaviest
// per-object step of the static catalog, with net/mail, mime/multipart and yaml.v3: "common" is the
// corpus's document, "crlf" the same with CRLF line endings.
func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"common", corpus.UserData},
		{"crlf", strings.ReplaceAll(corpus.UserData, "\n", "\r\n")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(FamilyAL2023, bc.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
