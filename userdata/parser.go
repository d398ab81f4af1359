package userdata

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// Parser is Parse with a memory of its last results, by family and text. The audit re-evaluates every
// stored EC2NodeClass each interval and the webhook re-reviews classes whose userData an edit left
// alone, and most clusters share a few userData texts among many classes: with net/mail,
// mime/multipart and yaml.v3 doing the parsing, a parse is most of an EC2NodeClass's evaluation
// (BENCHMARKS.md). It remembers what Registers read from those texts too: reading a script means
// parsing it as bash. It is safe for concurrent use; results are shared, so callers must not modify
// them.
type Parser struct {
	results  *lru.Cache[parseKey, parseResult]
	readings *lru.Cache[readingKey, reading]
}

type parseKey struct{ family, text string }

// readingKey is a text parsed for a family and the taint read from it.
type readingKey struct {
	parseKey
	key, effect string
}

type reading struct {
	reg Registration
	err error
}

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
	r, err := lru.New[readingKey, reading](max(size, 1))
	if err != nil {
		panic(err)
	}
	return &Parser{results: c, readings: r}
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

// Registers is Parse followed by UserData.Registers, answered from memory for a family, text and
// taint read before. The error is Parse's: the family's boot agent would not accept the text, and it
// registers nothing.
func (p *Parser) Registers(family, text, key, effect string) (Registration, error) {
	k := readingKey{parseKey{family, text}, key, effect}
	if len(text) <= MaxRemembered {
		if r, ok := p.readings.Get(k); ok {
			return r.reg, r.err
		}
	}
	ud, err := p.Parse(family, text)
	var reg Registration
	if err == nil {
		reg = ud.Registers(key, effect)
	}
	if len(text) <= MaxRemembered {
		p.readings.Add(k, reading{reg, err})
	}
	return reg, err
}
