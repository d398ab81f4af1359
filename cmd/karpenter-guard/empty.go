package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/internal/wording"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// nothingChecked says why a check found no EC2NodeClass, NodePool or aws-auth ConfigMap: where it
// looked, what it found there instead, and the likely mistake (a wrong path, only objects of other
// kinds, everything excluded, a Helm chart to render first). It is the last line of such a run.
func nothingChecked(set *manifest.Set, files, kustomizations []string) string {
	var where []string
	onlyStdin := len(kustomizations) == 0
	for _, f := range files {
		if f == "-" {
			where = append(where, "standard input")
			continue
		}
		onlyStdin = false
		where = append(where, f)
	}
	for _, k := range kustomizations {
		where = append(where, "the kustomization "+k)
	}
	others, snapshots := set.Ignored, 0
	for _, o := range set.Objects { // none is checked: a ClusterFacts document, or another kind
		if slices.Contains(set.FactsHomes, o.File) && !slices.Contains(files, o.File) {
			continue // found beside the manifests, not given
		}
		if o.Kind == objects.KindClusterFacts {
			snapshots++
		} else {
			others++
		}
	}
	var found []string
	if others > 0 {
		found = append(found, wording.Plural(others, "object of another kind", "objects of other kinds"))
	}
	if snapshots > 0 {
		found = append(found, wording.Plural(snapshots, "ClusterFacts snapshot", "ClusterFacts snapshots"))
	}
	if set.NotObjects > 0 {
		found = append(found, wording.Plural(set.NotObjects, "document that is not a Kubernetes object", "documents that are not Kubernetes objects"))
	}
	if n := len(set.Excluded); n > 0 {
		found = append(found, wording.Plural(n, "path", "paths")+" excluded by --exclude or .karpenter-guard-ignore")
	}
	if n := len(set.Charts); n > 0 {
		found = append(found, wording.Plural(n, "Helm chart", "Helm charts")+" skipped")
	}
	what := "no document at all"
	if len(found) > 0 {
		what = "only " + joinAnd(found)
	}
	hint := "is the path right?"
	switch {
	case len(set.Excluded) > 0:
		hint = "is the path right, or do the exclusions leave the manifests out?"
	case len(set.Charts) > 0 && others == 0:
		chart := "DIR"
		if len(set.Charts) == 1 {
			chart = set.Charts[0]
		}
		hint = "check the chart rendered: helm template " + chart + " | karpenter-guard check -f -"
	case onlyStdin:
		hint = "does the command piped in render the Karpenter manifests?"
	}
	return fmt.Sprintf("no EC2NodeClass, NodePool or aws-auth ConfigMap in %s, %s: %s", listFew(where, 3), what, hint)
}

// nothingAudited says why an audit found nothing to evaluate in the cluster at server.
func nothingAudited(server string) string {
	return fmt.Sprintf("no EC2NodeClass, NodePool or aws-auth ConfigMap in the cluster at %s: is the kubeconfig's context the cluster that runs Karpenter?", server)
}

// countChecked counts the objects of set a check evaluates (EC2NodeClasses, NodePools and aws-auth).
func countChecked(set *manifest.Set) int {
	n := 0
	for _, o := range set.Objects {
		if validators.KindOf(o) != "" {
			n++
		}
	}
	return n
}

// listFew lists at most n items, then how many more there are: pre-commit passes every staged file.
func listFew(items []string, n int) string {
	if len(items) <= n {
		return joinAnd(items)
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
