// Package validators is karpenter-guard's rule engine: what a rule is (Rule: its ID, kinds, default
// action, the facts it needs, whether it can fix what it finds, its documentation and its Check), the
// Catalog that holds rules and evaluates them over a set of objects (Evaluate), what an evaluation
// reports (Finding with its Edits, NotEvaluated, Skipped), the exception annotations objects opt out
// of rules with, and the catalog's rendering as the README table and docs/rules.md.
//
// The rules themselves are in package validators/rules, one file per rule named after its ID;
// rules.Default returns the catalog of this build.
//
// A rule's Check is a pure function of the object, the other objects of the input, the configuration
// and the facts (Context); it never calls AWS or Kubernetes. It returns its findings, or an error when
// it could not judge the object: the engine then reports the rule as not evaluated for that object,
// with the error's reason, and never as passed; a rule that could judge only part of the object
// returns both, its error a PartlyEvaluated. Rules that share an analysis (the parsed userData of a
// class, its node role's authorization, what its selector terms select) compute it once per
// evaluation through Memo.
package validators
