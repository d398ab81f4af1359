package validators

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/crds"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// Kinds a rule applies to.
const (
	KindEC2NodeClass = objects.KindEC2NodeClass
	KindNodePool     = objects.KindNodePool
	KindAWSAuth      = "aws-auth"
)

// Admission operations a Context can carry.
const (
	OperationCreate = "CREATE"
	OperationUpdate = "UPDATE"
	OperationDelete = "DELETE"
)

// Scope says where a rule can run.
type Scope string

// Scopes.
const (
	// ScopeAll rules run in the CLI, the webhook and the audit.
	ScopeAll Scope = ""
	// ScopeCLI rules read raw manifests: the API server prunes or refuses what they look for.
	ScopeCLI Scope = "cli"
	// ScopeAdmission rules judge a change (UPDATE or DELETE) and only run in the webhook.
	ScopeAdmission Scope = "admission"
	// ScopeAudit is where the audit runs: over the objects stored in the cluster, with ScopeAll rules.
	ScopeAudit Scope = "audit"
	// ScopeCLIAndAudit rules repeat a check the API server makes on admission (the CRD's schema), so
	// the webhook, which the API server calls after it, skips them; the CLI and the audit (objects
	// stored before a CRD upgrade) run them.
	ScopeCLIAndAudit Scope = "cli, audit"
)

// Rule is one entry of the catalog.
type Rule struct {
	ID string
	// Kinds lists what the rule checks: KindEC2NodeClass, KindNodePool, KindAWSAuth or KindAny.
	Kinds         []string
	DefaultAction config.Action
	// Needs lists the facts the rule always reads; when one is unknown the rule is reported as not
	// evaluated without running.
	Needs []facts.Fact
	// MayNeed lists facts the rule reads only in some cases (aws-auth only in modes that read it); when
	// one of those is unknown, Check returns the provider's error and the rule is reported as not
	// evaluated.
	MayNeed []facts.Fact
	// Fixable is true when the rule's findings carry edits that `check --fix` and the mutating webhook apply.
	Fixable bool
	Scope   Scope
	// Operations, when set, limits an admission rule to these operations (OperationUpdate, …): a rule
	// that judges a change has nothing to say, and no fact to ask, on a CREATE. A rule without them
	// judges what an object holds: it runs outside admission and on CREATE and UPDATE, never on a
	// DELETE.
	Operations []string
	// Summary is the one-line trigger shown in `rules` and the README table.
	Summary string
	// Doc is one paragraph: what goes wrong on the cluster and how to fix it.
	Doc string
	// Enabled, when set, turns the rule off for a configuration (as if its action were off).
	Enabled func(*config.Config) bool
	// Check returns the rule's findings for one object. Nil for a rule whose implementation needs facts
	// this build cannot supply yet; such a rule is always reported as not evaluated, never as passed.
	//
	// A rule that cannot judge the object returns an error; the engine then reports it as not evaluated
	// for that object, with the error's text as the reason, never as passed (findings returned with an
	// error are dropped, except with a *PartlyEvaluated: the rule judged part of the object). That
	// error is an unknown fact: the provider's *facts.UnknownError (facts.IsUnknown) for a fact of
	// MayNeed, or an answer the provider could not give, returned as it came so that its reason groups
	// the rule with the others it silenced. Any other error is a programming error in the rule, which
	// the engine reports the same way rather than fail the evaluation or pass the rule.
	Check func(c *Context, o *objects.Object) ([]Finding, error)
}

// Context is what a rule may read besides the object itself.
type Context struct {
	context.Context
	Config *config.Config
	Facts  facts.Provider
	// Input is every object of the run: the manifests given to the CLI, or the cluster's objects in the
	// webhook. Cross-object rules (nodepool-nodeclass-missing, the kubelet move) read it.
	Input []*objects.Object
	// OtherNodeClasses are the node classes of other Karpenter providers in the CLI's input
	// (AKSNodeClass, …; see manifest.Set), by group, kind and name: a NodePool whose nodeClassRef gives
	// only a name may mean one of them, and then it is no EC2NodeClass. Nil in the webhook and the audit.
	OtherNodeClasses []objects.NodeClassRef
	// Scope is where the engine runs (ScopeCLI, ScopeAdmission or ScopeAudit).
	Scope Scope
	// Operation is the admission request's operation (OperationCreate, …; "" outside admission) and
	// Old the object before it, for UPDATE and DELETE.
	Operation string
	Old       *objects.Object
	// Progress, when set, is called after each object with how many are done of how many.
	Progress func(done, total int)
	// FindNodeClass, when set, answers NodeClass lookups in place of Input: the webhook's cluster
	// cache is indexed by name, and a review should not read every stored class to find one.
	FindNodeClass func(name string) *objects.Object
	// FindNodePools, when set, answers NodePoolsOf in place of Input: the webhook's cluster cache holds
	// the NodePools an EC2NodeClass under review serves.
	FindNodePools func(nodeClass string) []*objects.Object
	// CRDs are the Karpenter CRDs karpenter-crd-invalid validates against (--karpenter-crds); nil for
	// the ones built in.
	CRDs *crds.Set
	// MaxPassed is how many of the rules that ran on an object and found nothing the result lists
	// (Result.Passed), at most; 0 lists none. The audit reports them as pass results, and bounds them
	// so that a cluster of thousands of objects does not hold a record for every rule of each.
	MaxPassed int

	// eval is the engine's state during an evaluation (see Catalog.Evaluate), none of a rule's business.
	eval *evaluation
}

// evaluation is what the engine keeps about the evaluation under way.
type evaluation struct {
	catalog *Catalog
	// unknown holds the answers about the catalog's facts (Catalog.facts, at most as many as it holds:
	// NewCatalog checks).
	unknown [32]factAnswer
	// memos holds the results of the analyses rules share (see Memo); made on first use, emptied at the
	// start of each run over the objects.
	memos map[memoKey]memo
	// nodeClasses indexes Input by name; built on first use in each run.
	nodeClasses map[string]*objects.Object
	// judged are the objects the running evaluation judges (see Judged).
	judged []*objects.Object
	// round is the run on what is at hand under way, if any (see Catalog.Evaluate), and tainted
	// counts the uses in it of results remembered from answers not at hand (see Context.misses).
	round   *facts.Round
	tainted int64
	// passRoom is how many more passes the evaluation lists (Context.MaxPassed at its start): a
	// thousand-object audit does not hold a record for every rule that passed.
	passRoom int
}

// state returns the engine's state of c's evaluation, made empty outside one (a rule's Check called
// by a test).
func (c *Context) state() *evaluation {
	if c.eval == nil {
		c.eval = &evaluation{}
	}
	return c.eval
}

// Judged returns the objects the running evaluation judges: those given to Catalog.Evaluate, which may
// be fewer than Input (a review judges one object among the cluster's). A rule that works on all of them
// at once, concurrently, starts from these.
func (c *Context) Judged() []*objects.Object { return c.state().judged }

// Catalog returns the catalog that evaluates c (nil until Catalog.Evaluate runs with it).
func (c *Context) Catalog() *Catalog { return c.state().catalog }

// NodeClass returns the EC2NodeClass of that name: FindNodeClass's answer when it is set, else the
// class in the input (indexed on first use in each Evaluate), or nil.
func (c *Context) NodeClass(name string) *objects.Object {
	if c.FindNodeClass != nil {
		return c.FindNodeClass(name)
	}
	st := c.state()
	if st.nodeClasses == nil {
		st.nodeClasses = map[string]*objects.Object{}
		for _, o := range c.Input {
			if o.NodeClass != nil {
				if _, dup := st.nodeClasses[o.Name]; !dup {
					st.nodeClasses[o.Name] = o
				}
			}
		}
	}
	return st.nodeClasses[name]
}

// NodePoolsOf returns the NodePools whose nodeClassRef names the EC2NodeClass of that name:
// FindNodePools's answer when it is set, else those of the input. A pool whose reference names
// another provider's kind is left out.
func (c *Context) NodePoolsOf(name string) []*objects.Object {
	all := c.Input
	if c.FindNodePools != nil {
		all = c.FindNodePools(name)
	}
	var out []*objects.Object
	for _, o := range all {
		if o.NodePool == nil {
			continue
		}
		ref := o.NodePool.Spec.Template.Spec.NodeClassRef
		if ref == nil || ref.Name != name || (ref.Kind != "" && ref.Kind != objects.KindEC2NodeClass) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// Catalog is the rule registry.
type Catalog struct {
	// shared holds the values of Resources (see Shared), by *Resource; Subset's catalogs share it.
	shared *sync.Map
	rules  []*Rule
	byID   map[string]*Rule
	// missing holds, per rule, the last reason composed for its unknown facts (see composeMissing).
	missing []atomic.Pointer[composedMissing]
	// kindRules lists, per kind and scope, the positions of the rules that run there, in catalog
	// order (see rulesFor).
	kindRules map[kindScope][]int
	// facts are the facts the rules need, and needs[i] rule i's Needs as positions in facts: an
	// evaluation keeps its answers in an array, not a map.
	facts []facts.Fact
	needs [][]int
}

// NewCatalog builds a catalog from rules; it panics on a duplicate or malformed rule, which is a
// programming error caught by every test run.
func NewCatalog(rules ...*Rule) *Catalog {
	c := &Catalog{byID: map[string]*Rule{}, shared: &sync.Map{}}
	for _, r := range rules {
		if r.ID == "" || len(r.Kinds) == 0 || r.DefaultAction == "" || r.Summary == "" || r.Doc == "" {
			panic(fmt.Sprintf("rule %q is missing an ID, kind, default action, summary or doc", r.ID))
		}
		if _, dup := c.byID[r.ID]; dup {
			panic(fmt.Sprintf("rule %q registered twice", r.ID))
		}
		c.byID[r.ID] = r
		c.rules = append(c.rules, r)
	}
	sort.SliceStable(c.rules, func(i, j int) bool {
		if ki, kj := kindOrder(c.rules[i].Kinds[0]), kindOrder(c.rules[j].Kinds[0]); ki != kj {
			return ki < kj
		}
		return c.rules[i].ID < c.rules[j].ID
	})
	c.missing = make([]atomic.Pointer[composedMissing], len(c.rules))
	c.kindRules = map[kindScope][]int{}
	for _, k := range []string{KindEC2NodeClass, KindNodePool, KindAWSAuth} {
		for _, scope := range []Scope{ScopeAll, ScopeCLI, ScopeAdmission, ScopeAudit} {
			for i, r := range c.rules {
				if r.AppliesTo(k) && r.runsInScope(scope) {
					c.kindRules[kindScope{k, scope}] = append(c.kindRules[kindScope{k, scope}], i)
				}
			}
		}
	}
	c.needs = make([][]int, len(c.rules))
	for i, r := range c.rules {
		for _, f := range r.Needs {
			fi := slices.Index(c.facts, f)
			if fi < 0 {
				fi = len(c.facts)
				c.facts = append(c.facts, f)
			}
			c.needs[i] = append(c.needs[i], fi)
		}
	}
	if len(c.facts) > len(evaluation{}.unknown) {
		panic(fmt.Sprintf("the rules need %d facts; Context keeps answers for %d", len(c.facts), len(evaluation{}.unknown)))
	}
	return c
}

// runsInScope reports whether the rule runs where the engine runs in scope.
func (r *Rule) runsInScope(scope Scope) bool {
	switch r.Scope {
	case ScopeAll, scope:
		return true
	case ScopeCLIAndAudit:
		return scope == ScopeCLI || scope == ScopeAudit
	}
	return false
}

type kindScope struct {
	kind  string
	scope Scope
}

// rulesFor returns the positions of the rules that apply to kind and run in scope (one of the Scope
// constants).
func (c *Catalog) rulesFor(kind string, scope Scope) []int {
	return c.kindRules[kindScope{kind, scope}]
}

func kindOrder(k string) int {
	switch k {
	case KindEC2NodeClass:
		return 0
	case KindNodePool:
		return 1
	case KindAWSAuth:
		return 2
	}
	return 3
}

// KindLabel names the kinds the rule checks, joined by sep, and its scope when it runs in one only:
// "EC2NodeClass (admission only)".
func (r *Rule) KindLabel(sep string) string {
	kind := strings.Join(r.Kinds, sep)
	if r.Scope != ScopeAll {
		kind += " (" + string(r.Scope) + " only)"
	}
	return kind
}

// AppliesTo reports whether the rule checks objects of that kind.
func (r *Rule) AppliesTo(kind string) bool {
	for _, k := range r.Kinds {
		if k == kind || k == KindAny {
			return true
		}
	}
	return false
}

// Rules returns the rules in catalog order (by kind, then ID).
func (c *Catalog) Rules() []*Rule { return c.rules }

// Rule returns the rule with that ID, or nil.
func (c *Catalog) Rule(id string) *Rule { return c.byID[id] }

// IDs returns every rule ID.
func (c *Catalog) IDs() []string {
	ids := make([]string, len(c.rules))
	for i, r := range c.rules {
		ids[i] = r.ID
	}
	return ids
}

// Subset returns a catalog of the given rules, which are rules of c, sharing its Resources.
func (c *Catalog) Subset(rules ...*Rule) *Catalog {
	sub := NewCatalog(rules...)
	sub.shared = c.shared
	return sub
}

// RulesIn returns the rules that run on objects of that kind in c, in catalog order: those of c's
// scope, for c's operation, that c's configuration leaves on. Exception annotations are not taken into
// account.
func (cat *Catalog) RulesIn(c *Context, kind string) []*Rule {
	var rs []*Rule
	for _, ri := range cat.rulesFor(kind, c.Scope) {
		if _, runs := cat.rules[ri].runsIn(c); runs {
			rs = append(rs, cat.rules[ri])
		}
	}
	return rs
}

// KindOf returns the rule kind an object is checked as (KindEC2NodeClass, KindNodePool or
// KindAWSAuth), or "" for an object no rule checks.
func KindOf(o *objects.Object) string {
	switch {
	case o.NodeClass != nil:
		return KindEC2NodeClass
	case o.NodePool != nil:
		return KindNodePool
	case o.AWSAuth != nil:
		return KindAWSAuth
	}
	return ""
}
