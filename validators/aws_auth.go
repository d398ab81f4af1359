package validators

import (
	"github.com/karpenter-guard/karpenter-guard/awsauth"
	"github.com/karpenter-guard/karpenter-guard/objects"
)

// InputAWSAuth returns the data of the first aws-auth ConfigMap among objs, whether EKS would find it
// malformed, and whether there was one. The CLI lets it stand in for a snapshot without awsAuth.
func InputAWSAuth(objs []*objects.Object) (data map[string]string, malformed, found bool) {
	for _, o := range objs {
		if o.AWSAuth == nil {
			continue
		}
		data, strs := ConfigMapData(o)
		_, problems := awsauth.Parse(data)
		return data, !strs || len(problems) > 0, true
	}
	return nil, false, false
}

// ConfigMapData returns an aws-auth object's data as strings, without parsing it; allStrings is false
// when a value is not a string (left out of data), which makes the ConfigMap malformed to EKS.
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
