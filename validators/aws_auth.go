package validators

import (
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// InputAWSAuth returns the data of the first aws-auth ConfigMap among objs, whether it is unreadable,
// and whether there was one. The CLI lets it stand in for a snapshot without awsAuth
// (facts.WithInputAWSAuth), which keeps what EKS would keep of it: entries EKS drops do not make the
// rest unknown. Only a data value that is not a string makes it unreadable: the API server rejects
// such a ConfigMap, so it never reaches EKS.
func InputAWSAuth(objs []*objects.Object) (data map[string]string, unreadable, found bool) {
	for _, o := range objs {
		if o.AWSAuth == nil {
			continue
		}
		data, strs := ConfigMapData(o)
		return data, !strs, true
	}
	return nil, false, false
}

// ConfigMapData returns an aws-auth object's data as strings, without parsing it; allStrings is false
// when a value is not a string (left out of data), which the API server rejects.
func ConfigMapData(o *objects.Object) (data map[string]string, allStrings bool) {
	data, allStrings = map[string]string{}, true
	for k, v := range o.AWSAuth.Data {
		str, ok := v.(string)
		if !ok && v != nil {
			allStrings = false
			continue
		}
		data[k] = str
	}
	return data, allStrings
}
