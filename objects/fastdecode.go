package objects

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// This file decodes the typed views from a node tree without reflection, for objects whose fields
// all hold what their Go types expect. yaml.v3's Node.Decode costs about 14 µs per object (its
// reflection walks every struct and map anew), a third of an admission review; this walks only the
// fields the views name.
//
// Like the userData fast paths, it only ever answers "decoded, and here is the result": on a wrong
// node kind, an unexpected tag, a repeated key, an alias or a merge key it declines, and Decode runs
// yaml.v3, which also writes every error message. FuzzDecodeFast checks on arbitrary documents that
// whenever it answers, yaml.v3 decodes the same values.

// fastDecoder holds the node it declined at, nil while the walk is still exact; every method is a
// no-op once it is not. For an object without lines (JSON), where that node is tells the reader which
// field yaml.v3's error is about.
type fastDecoder struct {
	bad *yaml.Node
}

// ok reports whether the walk is still exact.
func (d *fastDecoder) ok() bool { return d.bad == nil }

// decline stops the walk at node n (never nil).
func (d *fastDecoder) decline(n *yaml.Node) {
	if d.bad == nil {
		d.bad = n
	}
}

// decodeHeadFast fills the head of Decode: apiVersion and kind as strings (nil when absent) and the
// metadata.
// When it declines, bad is the node it stopped at.
func decodeHeadFast(root *yaml.Node, apiVersion, kind *any, meta *Metadata) (ok bool, bad *yaml.Node) {
	var d fastDecoder
	d.mapping(root, func(k string, v *yaml.Node) {
		switch k {
		case "apiVersion":
			*apiVersion = d.anyString(v)
		case "kind":
			*kind = d.anyString(v)
		case "metadata":
			d.metadata(v, meta)
		}
	})
	return d.ok(), d.bad
}

// decodeViewFast fills view, one of *EC2NodeClass, *NodePool or *ConfigMap, from root, and leaves it
// untouched when it declines; bad is then the node it stopped at. meta is the metadata
// decodeHeadFast read from root: the view takes it instead of decoding it again.
func decodeViewFast(root *yaml.Node, view any, meta *Metadata) (ok bool, bad *yaml.Node) {
	var d fastDecoder
	switch v := view.(type) {
	case *EC2NodeClass:
		var nc EC2NodeClass
		d.object(root, &nc.Metadata, meta, "spec", func(n *yaml.Node) { d.nodeClassSpec(n, &nc.Spec) })
		if d.ok() {
			*v = nc
		}
	case *NodePool:
		var np NodePool
		d.object(root, &np.Metadata, meta, "spec", func(n *yaml.Node) { d.nodePoolSpec(n, &np.Spec) })
		if d.ok() {
			*v = np
		}
	case *ConfigMap:
		var cm ConfigMap
		d.object(root, &cm.Metadata, meta, "data", func(n *yaml.Node) { cm.Data = d.anyMap(n) })
		if d.ok() {
			*v = cm
		}
	default:
		return false, nil
	}
	return d.ok(), d.bad
}

// object takes the metadata the head decoded (known) and decodes the one other field the view reads
// (spec, or data).
func (d *fastDecoder) object(root *yaml.Node, meta, known *Metadata, field string, decode func(*yaml.Node)) {
	*meta = *known
	d.mapping(root, func(k string, n *yaml.Node) {
		if k == field {
			decode(n)
		}
	})
}

func (d *fastDecoder) nodeClassSpec(n *yaml.Node, s *EC2NodeClassSpec) {
	d.mapping(n, func(k string, v *yaml.Node) {
		switch k {
		case "amiFamily":
			s.AMIFamily = d.str(v)
		case "amiSelectorTerms":
			s.AMISelectorTerms = sequence(d, v, func(e *yaml.Node, t *AMISelectorTerm) {
				d.mapping(e, func(k string, v *yaml.Node) {
					switch k {
					case "alias":
						t.Alias = d.str(v)
					case "id":
						t.ID = d.str(v)
					case "name":
						t.Name = d.str(v)
					case "owner":
						t.Owner = d.str(v)
					case "ssmParameter":
						t.SSMParameter = d.str(v)
					case "tags":
						t.Tags = d.stringMap(v)
					}
				})
			})
		case "subnetSelectorTerms":
			s.SubnetSelectorTerms = sequence(d, v, d.selectorTerm)
		case "securityGroupSelectorTerms":
			s.SecurityGroupSelectorTerms = sequence(d, v, d.selectorTerm)
		case "role":
			s.Role = d.str(v)
		case "instanceProfile":
			s.InstanceProfile = d.str(v)
		case "userData":
			s.UserData = pointer(d, v, func(n *yaml.Node, p *string) { *p = d.str(n) })
		case "metadataOptions":
			s.MetadataOptions = pointer(d, v, func(n *yaml.Node, m *MetadataOptions) {
				d.mapping(n, func(k string, v *yaml.Node) {
					switch k {
					case "httpEndpoint":
						m.HTTPEndpoint = d.str(v)
					case "httpTokens":
						m.HTTPTokens = d.str(v)
					case "httpPutResponseHopLimit":
						m.HTTPPutResponseHopLimit = pointer(d, v, func(n *yaml.Node, p *int64) { *p = d.integer(n, 64) })
					}
				})
			})
		case "blockDeviceMappings":
			s.BlockDeviceMappings = sequence(d, v, func(e *yaml.Node, b *BlockDeviceMapping) {
				d.mapping(e, func(k string, v *yaml.Node) {
					switch k {
					case "deviceName":
						b.DeviceName = d.str(v)
					case "rootVolume":
						b.RootVolume = d.boolean(v)
					case "ebs":
						b.EBS = pointer(d, v, func(n *yaml.Node, e *EBSBlock) {
							d.mapping(n, func(k string, v *yaml.Node) {
								switch k {
								case "encrypted":
									e.Encrypted = pointer(d, v, func(n *yaml.Node, p *bool) { *p = d.boolean(n) })
								case "volumeSize":
									e.VolumeSize = d.str(v)
								case "volumeType":
									e.VolumeType = d.str(v)
								}
							})
						})
					}
				})
			})
		case "associatePublicIPAddress":
			s.AssociatePublicIPAddress = pointer(d, v, func(n *yaml.Node, p *bool) { *p = d.boolean(n) })
		case "kubelet":
			s.Kubelet = d.anyMap(v)
		}
	})
}

func (d *fastDecoder) selectorTerm(n *yaml.Node, t *SelectorTerm) {
	d.mapping(n, func(k string, v *yaml.Node) {
		switch k {
		case "id":
			t.ID = d.str(v)
		case "name":
			t.Name = d.str(v)
		case "tags":
			t.Tags = d.stringMap(v)
		}
	})
}

func (d *fastDecoder) nodePoolSpec(n *yaml.Node, s *NodePoolSpec) {
	d.mapping(n, func(k string, v *yaml.Node) {
		switch k {
		case "template":
			d.mapping(v, func(k string, v *yaml.Node) {
				switch k {
				case "metadata":
					d.metadata(v, &s.Template.Metadata)
				case "spec":
					d.nodeClaimSpec(v, &s.Template.Spec)
				}
			})
		case "disruption":
			s.Disruption = pointer(d, v, func(n *yaml.Node, r *Disruption) {
				d.mapping(n, func(k string, v *yaml.Node) {
					switch k {
					case "consolidationPolicy":
						r.ConsolidationPolicy = d.str(v)
					case "consolidateAfter":
						r.ConsolidateAfter = d.str(v)
					case "expireAfter":
						r.ExpireAfter = d.str(v)
					}
				})
			})
		case "limits":
			s.Limits = d.anyMap(v)
		case "weight":
			s.Weight = pointer(d, v, func(n *yaml.Node, p *int32) { *p = int32(d.integer(n, 32)) })
		}
	})
}

func (d *fastDecoder) nodeClaimSpec(n *yaml.Node, s *NodeClaimSpec) {
	d.mapping(n, func(k string, v *yaml.Node) {
		switch k {
		case "nodeClassRef":
			s.NodeClassRef = pointer(d, v, func(n *yaml.Node, r *NodeClassRef) {
				d.mapping(n, func(k string, v *yaml.Node) {
					switch k {
					case "group":
						r.Group = d.str(v)
					case "apiVersion":
						r.APIVersion = d.str(v)
					case "kind":
						r.Kind = d.str(v)
					case "name":
						r.Name = d.str(v)
					}
				})
			})
		case "requirements":
			s.Requirements = sequence(d, v, func(e *yaml.Node, r *Requirement) {
				d.mapping(e, func(k string, v *yaml.Node) {
					switch k {
					case "key":
						r.Key = d.str(v)
					case "operator":
						r.Operator = d.str(v)
					case "values":
						r.Values = sequence(d, v, func(n *yaml.Node, s *string) { *s = d.str(n) })
					case "minValues":
						r.MinValues = pointer(d, v, func(n *yaml.Node, p *int) { *p = int(d.integer(n, strconv.IntSize)) })
					}
				})
			})
		case "expireAfter":
			s.ExpireAfter = d.str(v)
		case "kubelet":
			s.Kubelet = d.anyMap(v)
		}
	})
}

func (d *fastDecoder) metadata(n *yaml.Node, m *Metadata) {
	d.mapping(n, func(k string, v *yaml.Node) {
		switch k {
		case "name":
			m.Name = d.str(v)
		case "namespace":
			m.Namespace = d.str(v)
		case "annotations":
			m.Annotations = d.stringMap(v)
		case "labels":
			m.Labels = d.stringMap(v)
		}
	})
}

// mapping calls field for each entry of a mapping node; a null node is an empty struct, as in
// yaml.v3. It declines what yaml.v3 would refuse or treat specially: another node kind, a repeated
// key, a merge key, a key that is not a plain string.
func (d *fastDecoder) mapping(n *yaml.Node, field func(key string, value *yaml.Node)) {
	if !d.ok() || d.null(n) {
		return
	}
	if !plainMapping(n) {
		d.decline(n)
		return
	}
	for i := 0; i+1 < len(n.Content) && d.ok(); i += 2 {
		field(n.Content[i].Value, n.Content[i+1])
	}
}

// plainMapping reports whether n is a mapping yaml.v3 decodes as such: tagged !!map, its keys all
// !!str scalars, none repeated (yaml.v3 refuses a repeated key in any mapping it decodes) and none a
// merge key.
func plainMapping(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode || n.Tag != "!!map" {
		return false
	}
	c := n.Content
	var seen map[string]bool // past a few keys (see duplicate)
	for i := 0; i+1 < len(c); i += 2 {
		// A merge key is tagged !!merge, so "<<" tagged !!str is an ordinary key to yaml.v3.
		if c[i].Kind != yaml.ScalarNode || c[i].Tag != "!!str" || duplicate(c[:i], c[i].Value, &seen) {
			return false
		}
	}
	return true
}

// sequence decodes a sequence node element by element; null is a nil slice and an empty sequence an
// empty one, as in yaml.v3.
func sequence[T any](d *fastDecoder, n *yaml.Node, elem func(*yaml.Node, *T)) []T {
	if !d.ok() || d.null(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode || n.Tag != "!!seq" {
		d.decline(n)
		return nil
	}
	out := make([]T, len(n.Content))
	for i, e := range n.Content {
		if !d.ok() {
			return nil
		}
		if e.Kind == yaml.AliasNode || d.null(e) {
			d.decline(e) // yaml.v3 drops null elements of typed lists
			return nil
		}
		elem(e, &out[i])
	}
	return out
}

// pointer decodes an optional field: nil for null, else a new value.
func pointer[T any](d *fastDecoder, n *yaml.Node, elem func(*yaml.Node, *T)) *T {
	if !d.ok() || d.null(n) {
		return nil
	}
	p := new(T)
	elem(n, p)
	return p
}

// str decodes a string field: a !!str scalar, or null for "".
func (d *fastDecoder) str(n *yaml.Node) string {
	if !d.ok() || d.null(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.decline(n)
		return ""
	}
	return n.Value
}

// anyString decodes a string into an `any` field: nil for null.
func (d *fastDecoder) anyString(n *yaml.Node) any {
	if !d.ok() || d.null(n) {
		return nil
	}
	return d.str(n)
}

// boolean decodes true or false written in lower case (yaml.v3's other spellings go to yaml.v3).
func (d *fastDecoder) boolean(n *yaml.Node) bool {
	if !d.ok() || d.null(n) {
		return false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || (n.Value != "true" && n.Value != "false") {
		d.decline(n)
		return false
	}
	return n.Value == "true"
}

// integer decodes a plain decimal integer that fits in bits (other spellings go to yaml.v3).
func (d *fastDecoder) integer(n *yaml.Node, bits int) int64 {
	if !d.ok() || d.null(n) {
		return 0
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || !plainDecimal(n.Value) {
		d.decline(n)
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, bits)
	if err != nil {
		d.decline(n)
	}
	return v
}

func plainDecimal(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stringMap decodes a map of strings (annotations, labels, tags): !!str keys and values.
func (d *fastDecoder) stringMap(n *yaml.Node) map[string]string {
	if !d.ok() || d.null(n) {
		return nil
	}
	if !plainMapping(n) {
		d.decline(n)
		return nil
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
			d.decline(v)
			return nil
		}
		m[n.Content[i].Value] = v.Value
	}
	return m
}

// anyMap decodes a free-form mapping (kubelet settings, limits, ConfigMap data) as yaml.v3 decodes
// it into map[string]any: strings, plain decimal integers as int, true and false, null, and nested
// mappings and sequences. Other values (floats, other spellings) decline.
func (d *fastDecoder) anyMap(n *yaml.Node) map[string]any {
	if !d.ok() || d.null(n) {
		return nil
	}
	if !plainMapping(n) {
		d.decline(n)
		return nil
	}
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content) && d.ok(); i += 2 {
		m[n.Content[i].Value] = d.anyValue(n.Content[i+1])
	}
	return m
}

func (d *fastDecoder) anyValue(n *yaml.Node) any {
	switch {
	case !d.ok(), d.null(n):
		return nil
	case n.Kind == yaml.MappingNode:
		return d.anyMap(n)
	case n.Kind == yaml.SequenceNode && n.Tag == "!!seq":
		s := make([]any, len(n.Content))
		for i, e := range n.Content {
			s[i] = d.anyValue(e)
		}
		return s
	case n.Kind != yaml.ScalarNode:
		d.decline(n)
		return nil
	}
	switch n.Tag {
	case "!!str":
		return n.Value
	case "!!bool":
		return d.boolean(n)
	case "!!int":
		return int(d.integer(n, strconv.IntSize))
	}
	d.decline(n)
	return nil
}

// null reports whether n is null, which yaml.v3 decodes as the zero value. A node tagged !!null
// that is not a plain null (`!!null x`, a tagged mapping) is declined: yaml.v3 refuses those.
// Aliases are not followed: the caller sees an alias as a node kind it declines.
func (d *fastDecoder) null(n *yaml.Node) bool {
	if n.Tag != "!!null" {
		return false
	}
	switch {
	case n.Kind != yaml.ScalarNode, n.Style&yaml.TaggedStyle != 0:
		d.decline(n)
	case n.Value != "" && n.Value != "~" && n.Value != "null" && n.Value != "Null" && n.Value != "NULL":
		d.decline(n)
	}
	return true
}
