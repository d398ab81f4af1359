package fakeaws

// AssociationID is the id the fake gives the Pod Identity association of a service account, for tests
// that describe one without listing first.
var AssociationID = associationID
