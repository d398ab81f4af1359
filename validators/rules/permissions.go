package rules

import (
	"fmt"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds what the four permission rules (node-role-join-permissions,
// node-role-runtime-permissions, controller-launch-permissions, controller-runtime-permissions) share:
// a row of the simulation tables, asked of the policy simulator through the facts provider, and the
// verdict over the rows' answers (docs/rules.md, "Permissions").
//
// A row passes when every action is allowed on every resource. A denial without missing context
// values is certain and reported at the rule's action; a denial whose policies needed context keys the
// question did not carry is reported capped at warn. As soon as one answered question proves a row
// fails, the rule fires, even if other questions are unknown; it is not evaluated only when nothing
// answered proves a failure and some needed question is unknown.

// permissionRow is one row of a simulation table.
type permissionRow struct {
	// ID is the row's name in docs/rules.md (J1, W3, L4, D1), shown in messages.
	ID string
	// Row is the simulator call.
	Row facts.SimulationRow
	// Also are further simulator calls of the same table row, when its actions do not all apply to the
	// same resources (one call asks every action on every resource).
	Also []facts.SimulationRow
	// Effect says what fails on the cluster when the row is denied, as a sentence fragment
	// ("nodeadm waits up to 10 minutes for ec2:DescribeInstances, then init fails").
	Effect string
	// Fix is the exact change that grants the row.
	Fix string
}

// rowVerdict is what the simulator said of one row.
type rowVerdict struct {
	// row is the row asked (the caller's, which remembered rows share: read only).
	row *permissionRow
	// denied are the questions certainly denied; uncertain those denied with missing context values.
	denied, uncertain []facts.Simulation
	// unknown is why some questions have no answer ("" when all have one).
	unknown string
}

// simulateRows asks the provider every row and returns a verdict per row, in order. An error is
// returned only when the provider cannot simulate at all (Known(Simulations) fails).
func simulateRows(c *validators.Context, rows []permissionRow) ([]rowVerdict, error) {
	out := make([]rowVerdict, len(rows))
	for i := range rows {
		r := &rows[i]
		out[i].row = r
		if err := out[i].ask(c, r.Row); err != nil {
			return nil, err
		}
		for _, call := range r.Also {
			if err := out[i].ask(c, call); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// ask adds the answers to one simulator call of the row to the verdict. The error is the provider's
// when it is not an unknown fact.
func (v *rowVerdict) ask(c *validators.Context, call facts.SimulationRow) error {
	sims, err := c.Facts.Simulate(c, call)
	if err != nil {
		if !facts.IsUnknown(err) {
			return err
		}
		if v.unknown == "" {
			v.unknown = facts.Reason(err)
		}
		return nil
	}
	for _, s := range sims {
		switch {
		case s.Decision == "":
			if v.unknown == "" {
				v.unknown = "not in the facts snapshot"
			}
		case !s.Denied():
		case len(s.MissingContextValues) > 0:
			v.uncertain = append(v.uncertain, s)
		default:
			v.denied = append(v.denied, s)
		}
	}
	return nil
}

// calls returns the simulator calls of the row: Row, then Also.
func (r permissionRow) calls() []facts.SimulationRow {
	return append([]facts.SimulationRow{r.Row}, r.Also...)
}

// permissionFindings turns the verdicts into findings at field (its file line is line), for the principal described as who
// ("the node role arn:aws:iam::…:role/KarpenterNodeRole"). It returns an unknown-fact error naming the
// rows that could not be answered when no row proved a failure.
func permissionFindings(field string, line int, who string, verdicts []rowVerdict) ([]validators.Finding, error) {
	var out []validators.Finding
	var unknown []string
	for _, v := range verdicts {
		switch {
		case len(v.denied) > 0:
			out = append(out, validators.Finding{
				Field: field, Line: line,
				Message: fmt.Sprintf("%s may not call %s (%s): %s", who, describeDenials(v.denied), v.row.ID, v.row.Effect),
				Fix:     v.row.Fix,
			})
		case len(v.uncertain) > 0:
			out = append(out, validators.Finding{
				Field: field, Line: line, AtMost: config.ActionWarn,
				Message: fmt.Sprintf("%s could not be verified for %s (%s): the policy needs context keys %s that a simulation cannot supply; if the call is denied, %s",
					who, describeDenials(v.uncertain), v.row.ID, quoteList(missingKeys(v.uncertain)), v.row.Effect),
				Fix: v.row.Fix,
			})
		case v.unknown != "":
			unknown = append(unknown, v.row.ID+" ("+v.unknown+")")
		}
	}
	if len(out) == 0 && len(unknown) > 0 {
		return nil, facts.Unknown(facts.Simulations, "no simulation for "+strings.Join(unknown, ", "))
	}
	return out, nil
}

// describeDenials names the denied actions, each with its resources when not "*": "ec2:RunInstances on
// arn:aws:ec2:…:subnet/subnet-1", the object of "may not call".
func describeDenials(sims []facts.Simulation) string {
	var parts []string
	seen := map[string]bool{}
	for _, s := range sims {
		p := s.Action
		if s.Resource != "*" {
			p += " on " + s.Resource
		}
		if s.Decision == facts.DecisionExplicitDeny {
			p += " (explicitly denied)"
		}
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	const most = 4
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("%d more", len(parts)-most))
	}
	return strings.Join(parts, ", ")
}

// missingKeys returns the distinct missing context keys of the simulations, in order.
func missingKeys(sims []facts.Simulation) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sims {
		for _, k := range s.MissingContextValues {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}
