package scheduling

import (
	"slices"
	"testing"
)

func TestNearest(t *testing.T) {
	small := loadTypes(t, fixtureTypes)
	region := loadTypes(t, fixtureRegion)
	noRegion := usEast1()
	noRegion.Region = ""
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		// distance 1: m5 (three types) before m4 (one); then distance 2, most types first (t2: two)
		{"family m9, small", Nearest(small, usEast1(), LabelFamily, "m9", 3), []string{"m5", "m4", "t2"}},
		{"family m9, region", Nearest(region, regionEnv(), LabelFamily, "m9", 3), []string{"m9g", "m5", "m4"}},
		{"family that exists", Nearest(region, regionEnv(), LabelFamily, "m7gd", 2), []string{"m7gd", "m8gd"}},
		{"numbers by value", Nearest(small, usEast1(), LabelCPU, "5", 4), []string{"4", "2", "8", "1"}},
		{"kebab-cased names", Nearest(small, usEast1(), LabelGPUName, "a100g", 2), []string{"a100", "a10g"}},
		{"zones", Nearest(small, usEast1(), LabelZone, "us-east-1e", 2), []string{"us-east-1c", "us-east-1a"}},
		{"instance types", Nearest(region, regionEnv(), LabelInstanceType, "m5.larg", 2), []string{"m5.large", "c5.large"}},
		{"unusable types do not count", Nearest(small, usEast1(), LabelFamily, "a1", 1), []string{"c1"}},
		{"n larger than the values", Nearest(small, usEast1(), LabelOS, "linus", 5), []string{"linux"}},
		{"not computable", Nearest(small, usEast1(), "team", "ml", 3), nil},
		{"region unknown", Nearest(small, noRegion, LabelRegion, "us-east-1", 3), nil},
		{"n zero", Nearest(small, usEast1(), LabelFamily, "m9", 0), nil},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"m9", "m5", 1}, {"m9", "m6i", 2}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"c7g", "c7gd", 1}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
