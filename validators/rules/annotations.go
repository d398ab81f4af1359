package rules

import "github.com/karpenter-guard/karpenter-guard/objects"

// annotationPath is where an object's annotations are.
func annotationPath() []any { return []any{"metadata", "annotations"} }

// annotationLine returns the file line of an annotation key, or the object's line.
func annotationLine(o *objects.Object, key string) int {
	return o.Fields.Line(append(annotationPath(), key)...)
}
