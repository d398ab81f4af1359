package rules

import (
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
	"strings"
	"testing"
)

// TestPinnedAliasesPassTheVersionRule: every release a fix suggests pinning is one that
// ami-alias-version-format accepts, and families with only latest get no suggestion.
func TestPinnedAliasesPassTheVersionRule(t *testing.T) {
	for fam := range ami.AliasFamilies {
		pin := ami.PinnedAlias(fam)
		if strings.HasPrefix(fam, "windows") {
			if pin != "" {
				t.Errorf("%s only has latest, but a fix would suggest %s", fam, pin)
			}
			continue
		}
		if pin == "" {
			t.Errorf("no release to suggest for %s", fam)
			continue
		}
		if msg, _ := checkAlias(pin); msg != "" {
			t.Errorf("the suggested %s is denied: %s", pin, msg)
		}
	}
}
