package rules_test

import "testing"

func TestCapacityReservationSelectorNoMatch(t *testing.T) {
	reservations := section("capacityReservations", list("capacityReservations",
		listItem("id: cr-0123", "instanceType: p5.48xlarge", "availabilityZone: us-east-1a", `ownerID: "111122223333"`, "instanceMatchCriteria: targeted", "reservationType: default", "state: active", "tags: {team: ml}"),
		listItem("id: cr-0456", "instanceType: m7i.large", "availabilityZone: us-east-1d", `ownerID: "111122223333"`, "instanceMatchCriteria: open", "state: active", "tags: {team: web}"),
	))
	withTerms := func(terms string) string { return eksSpec + "capacityReservationSelectorTerms:\n" + terms }
	testRule(t, "capacity-reservation-selector-no-match", []ruleCase{
		{name: "no-terms", in: nodeClass("default", eksSpec), facts: netFacts(reservations)},
		{name: "id-matches", in: nodeClass("default", withTerms("  - id: cr-0123\n")), facts: netFacts(reservations)},
		{name: "tags-match", in: nodeClass("default", withTerms("  - tags:\n      team: ml\n")), facts: netFacts(reservations)},
		{name: "id-typo", fires: 1, in: nodeClass("default", withTerms("  - id: cr-0124\n")), facts: netFacts(reservations)},
		{name: "tags-and-criteria-disagree", fires: 1, in: nodeClass("default", withTerms("  - tags:\n      team: ml\n    instanceMatchCriteria: open\n")), facts: netFacts(reservations)},
		{name: "only-in-a-zone-without-subnets", fires: 1, in: nodeClass("default", withTerms("  - tags:\n      team: web\n")), facts: netFacts(reservations)},
		{name: "reservations-unknown", in: nodeClass("default", withTerms("  - id: cr-0123\n")), facts: netFacts(), notEvaluated: "not in the facts snapshot: capacityReservations"},
	})
}
