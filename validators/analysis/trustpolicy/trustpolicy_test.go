package trustpolicy

import (
	"net/url"
	"strings"
	"testing"
)

// TestTrustMemory: the remembered verdict on a text is the one reading it gives, errors included; a
// text is remembered once, the least recent is forgotten past the size, and a text longer than
// maxRememberedTrustText is read every time without being remembered.
func TestTrustMemory(t *testing.T) {
	m := newTrustMemory(2)
	denyEC2 := `{"Statement":[{"Sid":"NoInstances","Effect":"Deny","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:*"}]}`
	docs := []string{EC2Policy("aws"), url.QueryEscape(EC2Policy("aws-cn")), denyEC2, `{"Statement":`, `{"Statement":[{"Principal":7}]}`}
	for _, doc := range docs {
		want, wantErr := readTrust(decodeTrustDocument(doc))
		for range 2 {
			got, err := m.read(doc)
			if got != want || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Errorf("read(%q) = %+v, %v; reading it gives %+v, %v", doc, got, err, want, wantErr)
			}
		}
		if !m.readings.Contains(doc) {
			t.Errorf("%q was not remembered", doc)
		}
	}
	if n := m.readings.Len(); n != 2 {
		t.Errorf("%d texts remembered, want the size, 2", n)
	}
	if m.readings.Contains(docs[0]) {
		t.Error("the least recent text is still remembered past the size")
	}

	long := strings.Replace(EC2Policy("aws"), `"Statement"`, `"Padding":"`+strings.Repeat("x", maxRememberedTrustText)+`","Statement"`, 1)
	v, err := m.read(long)
	if err != nil || !v.Allowed {
		t.Errorf("a long policy letting EC2 in read as %+v, %v", v, err)
	}
	if m.readings.Contains(long) {
		t.Error("a text over maxRememberedTrustText was remembered")
	}
}
