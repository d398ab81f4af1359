package objects

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
)

// ContentDigest identifies an object's content (Content) in two parts, the SHA-256 digests of its JSON
// (encoding/json, map keys sorted, so equal contents give equal digests): everything but metadata, and
// metadata alone (the digest of no bytes when there is none, apart from an explicit null). A verdict
// that depends only on the spec, such as a CRD schema's without rules on metadata, is remembered by the
// first; the two together identify the whole object.
type ContentDigest struct {
	WithoutMetadata [sha256.Size]byte
	Metadata        [sha256.Size]byte
}

// DigestContent returns the digest of an object's content (see ContentDigest).
func DigestContent(content map[string]any) (ContentDigest, error) {
	var d ContentDigest
	rest := content
	if meta, ok := content["metadata"]; ok {
		data, err := json.Marshal(meta)
		if err != nil {
			return ContentDigest{}, fmt.Errorf("encode metadata: %w", err)
		}
		d.Metadata = sha256.Sum256(data)
		rest = make(map[string]any, len(content))
		for k, v := range content {
			if k != "metadata" {
				rest[k] = v
			}
		}
	} else {
		d.Metadata = sha256.Sum256(nil)
	}
	data, err := json.Marshal(rest)
	if err != nil {
		return ContentDigest{}, fmt.Errorf("encode object: %w", err)
	}
	d.WithoutMetadata = sha256.Sum256(data)
	return d, nil
}

// derived holds what an Object computes from its fields once, since it is not modified after
// decoding: the content (for an object read from a file, a converted copy of its tree, about the size
// of its JSON) and its digest.
type derived struct {
	contentOnce sync.Once
	content     map[string]any
	contentErr  error

	digestOnce sync.Once
	digest     ContentDigest
	digestErr  error
}

// ContentDigest returns the digest of the object's content (see ContentDigest), computed once.
func (o *Object) ContentDigest() (ContentDigest, error) {
	o.derived.digestOnce.Do(func() {
		content, err := o.Content()
		if err != nil {
			o.derived.digestErr = err
			return
		}
		d, err := DigestContent(content)
		if err != nil {
			o.derived.digestErr = fmt.Errorf("%s: %w", o.Ref(), err)
			return
		}
		o.derived.digest = d
	})
	return o.derived.digest, o.derived.digestErr
}
