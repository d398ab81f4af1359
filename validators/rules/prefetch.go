package rules

import (
	"context"
	"slices"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file asks a remote provider, before the rules run, the questions the rules are about to ask.
// Rules ask one question at a time, and a question may depend on another's answer (the access entry
// of the role an instance profile holds); asked that way, a cold review through the live provider costs
// the sum of its AWS round trips. Asked ahead, every independent question is on the wire at once
// (facts.Ask, facts.AskLimit at a time) and each chain of dependent ones follows its own answers, so
// the review costs about one round trip per level of dependency. The answers land in the provider's
// cache; the rules then run exactly as before, and meet them there.
//
// The questions mirror what the rules and their analyses ask (node_role.go, authorization.go,
// ami_resolution.go, subnet_selection.go, security_group_selection.go, node_role_not_found.go,
// instance_profile_not_found.go, spot_service_linked_role_missing.go, aws_auth_removes_node_role.go,
// ebs_unencrypted.go): a question the rules would not ask in a healthy world is not asked ahead. A
// rule that asks something this file does not foresee still gets its answer, one round trip later.
// Where a chain needs an answer that failed (the cluster could not be described), it stops: what
// depends on it is not asked, and the rules report it unknown with that answer's reason.
// TestAskAheadMirrorsTheRules holds the two together.

// askAhead asks c.Facts ahead, concurrently, the questions the rules of cat will ask about objs, when
// the provider wants that (facts.AsksAhead), and returns when they are answered or late. It is the
// catalog's validators.AskAheadFunc (see Default).
func askAhead(cat *validators.Catalog, c *validators.Context, objs []*objects.Object) {
	if !facts.AsksAhead(c.Facts) {
		return
	}
	q := &aheadQuestions{p: c.Facts, seen: map[string]bool{}}
	kinds := map[string]*ruleFacts{} // per kind: what the rules that run on it need, computed once
	for _, o := range objs {
		kind := validators.KindOf(o)
		if kind == "" {
			continue
		}
		rf := kinds[kind]
		if rf == nil {
			rf = factsOf(cat, c, kind)
			kinds[kind] = rf
		}
		for _, f := range rf.needs {
			q.known(f, rf)
		}
		switch kind {
		case validators.KindEC2NodeClass:
			q.nodeClass(o.NodeClass, rf)
			q.nodeIdentity(c, o, rf)
			q.controllerPermissions(c, o, rf)
			q.network(c, o, rf)
		case validators.KindNodePool:
			q.nodePoolNetwork(c, o, rf)
			if rf.touches(facts.Roles) {
				if _, spot := allowsSpot(o.NodePool.Spec.Template.Spec.Requirements); spot {
					q.add("spot role", func(ctx context.Context) {
						if r, err := q.p.Role(ctx, spotServiceLinkedRole); err == nil && r == nil {
							_, _ = q.p.Cluster(ctx) // the finding names the account
						}
					})
				}
			}
		case validators.KindAWSAuth:
			// aws-auth-removes-node-role resolves the role of every EC2NodeClass (and its access entry)
			// when the change may drop a mapping, in a mode that reads aws-auth.
			if c.Old == nil || c.Old.AWSAuth == nil || !rf.touches(facts.Roles) {
				continue
			}
			for _, nc := range c.Input {
				if nc.NodeClass != nil {
					q.nodeRole(nc.NodeClass.Spec, roleQuestions{entries: true, awsAuthOnly: true})
				}
			}
		}
	}
	facts.Ask(c.Context, facts.AskLimit, q.list...)
}

// ruleFacts are the rules that run on one kind and the facts they read: needs are their Needs (the
// engine asks Known of each before running them), and all adds their MayNeed.
type ruleFacts struct {
	rules []string
	needs []facts.Fact
	all   []facts.Fact
}

// touches reports whether a rule that runs reads the fact, always or in some cases.
func (rf *ruleFacts) touches(f facts.Fact) bool { return slices.Contains(rf.all, f) }

// runs reports whether the rule of that ID runs: some questions only one rule asks.
func (rf *ruleFacts) runs(id string) bool { return slices.Contains(rf.rules, id) }

// factsOf returns what the rules of cat that run on kind in c read. Exception annotations are not
// taken into account: an object that skips a rule may have a question asked ahead that no rule then
// reads.
func factsOf(cat *validators.Catalog, c *validators.Context, kind string) *ruleFacts {
	rf := &ruleFacts{}
	for _, r := range cat.RulesIn(c, kind) {
		if r.Check == nil {
			continue
		}
		rf.rules = append(rf.rules, r.ID)
		for _, f := range r.Needs {
			if !slices.Contains(rf.needs, f) {
				rf.needs = append(rf.needs, f)
			}
		}
		for _, f := range slices.Concat(r.Needs, r.MayNeed) {
			if !slices.Contains(rf.all, f) {
				rf.all = append(rf.all, f)
			}
		}
	}
	return rf
}

// aheadQuestions collects the questions of one evaluation, each once.
type aheadQuestions struct {
	p    facts.Provider
	seen map[string]bool
	list []func(context.Context)
}

// add adds a question under key, unless one with that key was added already.
func (q *aheadQuestions) add(key string, ask func(context.Context)) {
	if q.seen[key] {
		return
	}
	q.seen[key] = true
	q.list = append(q.list, ask)
}

// known asks whether a fact can be had, as the engine does before running a rule that needs it. The
// cluster and its facts are one question (one DescribeCluster answers them all; once it has failed,
// they are unknown from the cache, without another call).
func (q *aheadQuestions) known(f facts.Fact, rf *ruleFacts) {
	switch f {
	case facts.ClusterNodeClasses:
		return // not a remote question: the webhook's and the audit's own caches answer it
	case facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID:
		var needed []facts.Fact
		key := "known cluster"
		for _, f := range []facts.Fact{facts.ClusterAuthenticationMode, facts.ClusterVersion, facts.ClusterVPCID} {
			if slices.Contains(rf.needs, f) {
				needed = append(needed, f)
				key += " " + string(f)
			}
		}
		q.add(key, func(ctx context.Context) {
			_, _ = q.p.Cluster(ctx)
			for _, f := range needed {
				_ = q.p.Known(ctx, f)
			}
		})
		return
	}
	q.add("known "+string(f), func(ctx context.Context) { _ = q.p.Known(ctx, f) })
}

// nodeClass adds the questions about one EC2NodeClass: its node role (and the role's access entry),
// each AMI term, each subnet and security-group term, and the account's EBS defaults when a mapping
// does not say its volume is encrypted.
func (q *aheadQuestions) nodeClass(nc *objects.EC2NodeClass, rf *ruleFacts) {
	spec := nc.Spec
	if rf.touches(facts.Roles) || rf.touches(facts.InstanceProfiles) {
		q.nodeRole(spec, roleQuestions{
			entries:         rf.touches(facts.AccessEntries),
			awsAuth:         rf.touches(facts.AWSAuth),
			profileFallback: rf.runs(nodeRoleNotFound.ID),
			roleFallback:    rf.runs(instanceProfileNotFound.ID),
		})
	}
	if rf.touches(facts.Images) {
		// The AMI rules resolve the terms in order and give up at the first that fails: a term after an
		// alias is resolved only once the cluster (its version) is known, except by ami-family-mismatch,
		// which skips aliases, when the class names its family.
		afterAlias := false
		eachTerm := rf.runs(amiFamilyMismatch.ID) && spec.AMIFamily != "" && spec.AMIFamily != userdata.FamilyCustom
		for _, t := range spec.AMISelectorTerms {
			q.amiTerm(t, afterAlias && !eachTerm)
			afterAlias = afterAlias || t.Alias != ""
		}
	}
	if rf.touches(facts.Subnets) {
		for _, t := range spec.SubnetSelectorTerms {
			st := facts.SelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags}
			q.add("subnets "+st.String(), func(ctx context.Context) { _, _ = q.p.Subnets(ctx, st) })
		}
	}
	if rf.touches(facts.SecurityGroups) {
		for _, t := range spec.SecurityGroupSelectorTerms {
			st := facts.SelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags}
			q.add("groups "+st.String(), func(ctx context.Context) { _, _ = q.p.SecurityGroups(ctx, st) })
		}
	}
	if rf.touches(facts.EBSDefaults) {
		if explicit, omitted := unencryptedMappings(spec); len(explicit)+len(omitted) > 0 {
			q.add("ebs defaults", func(ctx context.Context) { _, _ = q.p.EBSDefaults(ctx) })
		}
	}
}

// roleQuestions say which questions follow the node role's.
type roleQuestions struct {
	// entries: the role's access entry, in a mode that reads entries.
	entries bool
	// awsAuth: aws-auth, which the node-role rules read once the role resolves (see awsAuth).
	awsAuth bool
	// profileFallback: for a spec.role that names no role, the instance profile of that name
	// (node-role-not-found names it); roleFallback: the mirror for spec.instanceProfile
	// (instance-profile-not-found).
	profileFallback, roleFallback bool
	// awsAuthOnly: nothing unless the cluster's mode reads aws-auth (aws-auth-removes-node-role).
	awsAuthOnly bool
}

// nodeRole adds the chain that resolves an EC2NodeClass's node role as resolveRole does: spec.role, or
// the role inside spec.instanceProfile; then the questions that follow (see roleQuestions).
func (q *aheadQuestions) nodeRole(spec objects.EC2NodeClassSpec, rq roleQuestions) {
	gate := func(ctx context.Context) bool {
		if !rq.awsAuthOnly {
			return true
		}
		cl, err := q.p.Cluster(ctx)
		return err == nil && cl.HonoursAWSAuth()
	}
	prefix := ""
	if rq.awsAuthOnly {
		prefix = "aws-auth "
	}
	switch {
	case spec.Role != "":
		name := lastSegment(spec.Role)
		q.add(prefix+"role "+strings.ToLower(name), func(ctx context.Context) {
			if !gate(ctx) {
				return
			}
			r, err := q.p.Role(ctx, name)
			switch {
			case err != nil:
			case r == nil:
				if rq.profileFallback && q.p.Known(ctx, facts.InstanceProfiles) == nil {
					_, _ = q.p.InstanceProfile(ctx, name)
				}
			default:
				q.afterRole(ctx, r, rq)
			}
		})
	case spec.InstanceProfile != "":
		name := lastSegment(spec.InstanceProfile)
		q.add(prefix+"instance profile "+strings.ToLower(name), func(ctx context.Context) {
			if !gate(ctx) {
				return
			}
			p, err := q.p.InstanceProfile(ctx, name)
			switch {
			case err != nil:
			case p == nil:
				if rq.roleFallback && q.p.Known(ctx, facts.Roles) == nil {
					_, _ = q.p.Role(ctx, name)
				}
			case len(p.Roles) > 0:
				if r, err := q.p.Role(ctx, p.Roles[0]); err == nil && r != nil {
					q.afterRole(ctx, r, rq)
				}
			}
		})
	}
}

// afterRole asks what the rules ask once the node role is known, as analyseAuthorization does: the
// role's access entry when the cluster's mode reads entries, and aws-auth when the mode reads it or it
// is known; nothing that needs the cluster when it cannot be described (its reason is theirs too).
func (q *aheadQuestions) afterRole(ctx context.Context, r *facts.Role, rq roleQuestions) {
	if !rq.entries && !rq.awsAuth {
		return
	}
	cl, err := q.p.Cluster(ctx)
	if rq.entries && err == nil && cl.HonoursAccessEntries() {
		_, _ = q.p.AccessEntry(ctx, r)
	}
	if rq.awsAuth && ((err == nil && cl.HonoursAWSAuth()) || q.p.Known(ctx, facts.AWSAuth) == nil) {
		_, _ = q.p.AWSAuth(ctx)
	}
}

// amiTerm adds the questions that resolve one AMI selector term, as resolveTerm does: an alias through
// the SSM parameter of the cluster's version, one chain per architecture, then the image it names;
// another term with one image query (the provider resolves an ssmParameter term itself), once the
// cluster is described when the term needs the cluster's account (owner self) or afterCluster says so.
func (q *aheadQuestions) amiTerm(t objects.AMISelectorTerm, afterCluster bool) {
	if t.Alias == "" {
		it := facts.ImageTerm{ID: t.ID, Name: t.Name, Owner: t.Owner, SSMParameter: t.SSMParameter, Tags: t.Tags}
		self := slices.Contains(it.Owners(), "self")
		q.add("images "+it.String(), func(ctx context.Context) {
			if afterCluster || self {
				cl, err := q.p.Cluster(ctx)
				if err != nil || (afterCluster && cl.Version == "") || (self && cl.AccountID == "") {
					return
				}
			}
			_, _ = q.p.Images(ctx, it)
		})
		return
	}
	fam, ver, _ := strings.Cut(t.Alias, "@")
	for _, arch := range []string{"x86_64", "arm64"} {
		q.add("alias "+t.Alias+" "+arch, func(ctx context.Context) {
			cl, err := q.p.Cluster(ctx)
			if err != nil || cl.Version == "" {
				return
			}
			param, ok := facts.AliasParameters(strings.ToLower(fam), ver, cl.Version)[arch]
			if !ok {
				return
			}
			if id, found, err := q.p.SSMParameter(ctx, param); err == nil && found {
				_, _ = q.p.Images(ctx, facts.ImageTerm{ID: id})
			}
		})
	}
}
