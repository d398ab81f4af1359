package userdata

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// Parser is Parse with a memory of its last results, by family and text. The audit re-evaluates every
// stored EC2NodeClass each interval and the webhook re-reviews classes whose userData an edit left
// alone, and most clusters share a few userData texts among many classes: with net/mail,
// mime/multipart and yaml.v3 doing the parsing, a parse is most of an EC2NodeClass's evaluation
// (BENCHMARKS.md). It is safe for concurrent use; results are shared, so callers must not modify them.
type Parser struct {
	results *lru.Cache[parseKey, parseResult]
}

type parseKey struct{ family, text string }

type parseResult struct {
	ud  UserData
	err error
}

// NewParser returns a parser that remembers the results of the size most recently parsed texts.
// Texts longer than MaxRemembered are parsed every time, so the memory it holds stays bounded.
func NewParser(size int) *Parser {
	c, err := lru.New[parseKey, parseResult](max(size, 1))
	if err != nil {
		panic(err) // only for a size below 1, which max rules out
	}
	return &Parser{results: c}
}

// MaxRemembered is the longest text a Parser remembers: userData of EC2NodeClasses is a few KiB;
// EC2 itself caps it at 16 KiB.
const MaxRemembered = 16 << 10

// Parse is the package's Parse, answered from memory for a family and text parsed before.
func (p *Parser) Parse(family, text string) (UserData, error) {
	if len(text) > MaxRemembered {
		return Parse(family, text)
	}
	k := parseKey{family, text}
	if r, ok := p.results.Get(k); ok {
		return r.ud, r.err
	}
	ud, err := Parse(family, text)
	p.results.Add(k, parseResult{ud, err})
	return ud, err
}
