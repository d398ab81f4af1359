package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/karpenter-guard/karpenter-guard/config"
)

// TestClip: a text up to maxTextBytes is kept; a longer one is cut on a rune boundary to at most
// maxTextBytes, says it was clipped from how many bytes and where to read it whole, and is valid
// UTF-8 even when the input was not.
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		clipped bool
	}{
		{"empty", "", false},
		{"short", "karpenter-guard.io/skip: the team owns this AMI", false},
		{"exactly the limit", strings.Repeat("a", maxTextBytes), false},
		{"one byte over", strings.Repeat("a", maxTextBytes+1), true},
		{"200 KiB", strings.Repeat("reason ", 200<<10/7), true},
		{"two-byte runes", strings.Repeat("é", maxTextBytes), true},
		{"three-byte runes", strings.Repeat("語", maxTextBytes), true},
		{"four-byte runes off by one", "x" + strings.Repeat("😀", maxTextBytes), true},
		{"not UTF-8", strings.Repeat("ab\xff", maxTextBytes), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clip(tc.in)
			if !tc.clipped {
				if got != tc.in {
					t.Errorf("clip changed a text of %d bytes", len(tc.in))
				}
				return
			}
			if len(got) > maxTextBytes {
				t.Errorf("clipped to %d bytes, want at most %d", len(got), maxTextBytes)
			}
			if !utf8.ValidString(got) {
				t.Errorf("clipped text is not valid UTF-8: %q", got)
			}
			suffix := fmt.Sprintf("… (clipped from %d bytes; `karpenter-guard audit` prints it whole)", len(strings.ToValidUTF8(tc.in, "\uFFFD")))
			kept, ok := strings.CutSuffix(got, suffix)
			if !ok {
				t.Fatalf("clipped text does not end with %q: …%q", suffix, got[max(0, len(got)-100):])
			}
			if !strings.HasPrefix(strings.ToValidUTF8(tc.in, "\uFFFD"), kept) || len(kept) < maxTextBytes-len(suffix)-utf8.UTFMax {
				t.Errorf("kept %d bytes that are not the text's beginning (or too few)", len(kept))
			}
		})
	}
}

// testAnnotations are the annotations of the reports split in these tests.
var testAnnotations = map[string]string{PartialAnnotation: "true", ModeAnnotation: string(config.ModeEnforce)}

// result is a skip result of object name whose message has n bytes.
func result(name string, n int) Result {
	return Result{Source: resultSource, Policy: "imds-v1-enabled", Rule: "imds-v1-enabled", Result: "skip", Category: "EC2NodeClass",
		Message:   strings.Repeat("m", n),
		Resources: []corev1.ObjectReference{{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: name}}}
}

func results(count, size int) []Result {
	out := make([]Result, count)
	for i := range out {
		out[i] = result(fmt.Sprintf("class-%05d", i), size)
	}
	return out
}

// sentSize is the size of a report as the client sends it on an update: the unstructured object, with
// the resource version of the object it replaces.
func sentSize(t *testing.T, r *Report) int {
	t.Helper()
	u, err := toUnstructured(r)
	if err != nil {
		t.Fatal(err)
	}
	u.SetResourceVersion("18446744073709551615")
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// TestSplit: results are cut into reports of at most maxResults results and maxReportBytes as sent,
// named base, base-2, … in order, the same way every time; an outcome without results is still one
// (empty) report; one result too large for any report gets a report of its own.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []Result
		counts  []int // results per report; nil: any, in at least minReports reports
		min     int
	}{
		{name: "none", counts: []int{0}},
		{name: "one", results: results(1, 100), counts: []int{1}},
		{name: "by count", results: results(1201, 100), counts: []int{500, 500, 201}},
		// 450 results of about 1.3 KiB: under the count, over the size.
		{name: "by size", results: results(450, maxTextBytes), min: 2},
		// 600 small results, then 600 of about 1.3 KiB: the count binds first, then the size.
		{name: "by count then size", results: append(results(600, 100), results(600, maxTextBytes)...), min: 3},
		{name: "oversized alone", results: []Result{result("a", 10), result("b", maxReportBytes), result("c", 10)}, counts: []int{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reps := split(ClusterPolicyReportGVK, "", ReportName, tc.results, testAnnotations)
			again := split(ClusterPolicyReportGVK, "", ReportName, tc.results, testAnnotations)
			var got []int
			total := 0
			for i, r := range reps {
				if want := chunkName(ReportName, i); r.Name != want {
					t.Errorf("report %d named %q, want %q", i, r.Name, want)
				}
				if len(again) != len(reps) || again[i].Name != r.Name || len(again[i].Results) != len(r.Results) {
					t.Errorf("a second split differs")
				}
				if len(r.Results) > maxResults {
					t.Errorf("%s holds %d results", r.Name, len(r.Results))
				}
				if n := sentSize(t, r); n > maxReportBytes && len(r.Results) > 1 {
					t.Errorf("%s is %d bytes as sent, over %d", r.Name, n, maxReportBytes)
				}
				if r.Summary.Skip != len(r.Results) || r.Labels[ManagedByLabel] != ManagedBy {
					t.Errorf("%s: summary %+v for %d results, labels %v", r.Name, r.Summary, len(r.Results), r.Labels)
				}
				for j, res := range r.Results {
					if res.Resources[0].Name != tc.results[total+j].Resources[0].Name {
						t.Fatalf("%s: result %d out of order", r.Name, j)
					}
				}
				total += len(r.Results)
				got = append(got, len(r.Results))
			}
			if total != len(tc.results) {
				t.Errorf("%d results in the reports, want %d", total, len(tc.results))
			}
			if tc.counts != nil && fmt.Sprint(got) != fmt.Sprint(tc.counts) {
				t.Errorf("results per report %v, want %v", got, tc.counts)
			}
			if tc.counts == nil && len(reps) < tc.min {
				t.Errorf("results per report %v: want at least %d reports", got, tc.min)
			}
		})
	}
}

// TestSplitFillsReports: a report is cut by size only when the next result would not fit (within the
// few bytes the summary's counts may grow by), so a split by size makes no more reports than needed.
func TestSplitFillsReports(t *testing.T) {
	rs := results(450, maxTextBytes)
	reps := split(ClusterPolicyReportGVK, "", ReportName, rs, testAnnotations)
	if len(reps) < 2 {
		t.Fatalf("%d reports", len(reps))
	}
	for _, r := range reps[:len(reps)-1] {
		next := *r
		next.Results = append(append([]Result{}, r.Results...), rs[0])
		if n := sentSize(t, &next); n <= maxReportBytes-32 {
			t.Errorf("%s (%d results) would have held one more: %d bytes with it", r.Name, len(r.Results), n)
		}
	}
}
