package userdata

import (
	"errors"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// FeatureGate returns the value nodeadm takes for its feature gate name (spec.featureGates of a
// NodeConfig), and whether any NodeConfig of the userData sets it. nodeadm merges the NodeConfig
// documents it finds in the order they appear, the last value of a field winning (nodeadm's
// "Merging multiple configuration objects" example), so the last document that sets the gate decides.
// A document that is not YAML, or sets the gate to something other than a boolean, is skipped:
// nodeadm refuses it, and userdata-invalid reports that.
func (u UserData) FeatureGate(name string) (enabled, set bool) {
	for i, p := range u.Parts {
		if p.Kind != KindNodeConfig {
			continue
		}
		text := p.Body
		if u.MIME {
			t, err := nodeConfigPartText(p.Body, i+1)
			if err != nil {
				continue
			}
			text = t
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var doc struct {
				Spec struct {
					FeatureGates map[string]any `yaml:"featureGates"`
				} `yaml:"spec"`
			}
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				// A later document cannot be told from the rest of a broken one.
				break
			}
			if v, ok := doc.Spec.FeatureGates[name].(bool); ok {
				enabled, set = v, true
			}
		}
	}
	return enabled, set
}

// HasNodeConfig reports whether the userData holds a NodeConfig for nodeadm: a NodeConfig MIME part, or
// a whole userData that is one.
func (u UserData) HasNodeConfig() bool {
	for _, p := range u.Parts {
		if p.Kind == KindNodeConfig {
			return true
		}
	}
	return false
}
