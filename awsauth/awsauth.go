// Package awsauth reads the data of the kube-system/aws-auth ConfigMap exactly the way EKS's
// aws-iam-authenticator reads it (ParseMap in its pkg/mapper/configmap, and the Validate methods of its
// pkg/config mappings), keeping the line of every entry so that a problem can be pointed at inside
// mapRoles.
//
// What the authenticator does, and Read reproduces with the same libraries:
//
//   - It reads three data keys, matched with their exact case: mapRoles, mapUsers and mapAccounts.
//     Any other key (maproles, MapRoles, mapRole) is never read, and nothing is logged about it.
//   - A value that is blank, or only a pair of double quotes, single quotes or backquotes, is skipped.
//   - mapRoles and mapUsers go through k8s.io/apimachinery's yaml.ToJSON (YAML 1.1 by sigs.k8s.io/yaml;
//     a value that starts with "{" is taken as JSON unchanged), then encoding/json into its
//     RoleMapping and UserMapping structs. So entry keys match in any case (roleARN is rolearn),
//     unknown entry keys are ignored, and a field of the wrong type is left empty while the rest of
//     the list still decodes. A value that does not convert (invalid YAML) or is not a list leaves that
//     key without entries; the other keys are still read.
//   - Each entry is then validated on its own: a role entry needs exactly one of rolearn and sso (and a
//     well-formed sso), a user entry a userarn. An entry that fails is dropped; the others are kept.
//     Nothing else is checked: an entry without username or groups is kept as it is.
//   - mapAccounts is decoded by gopkg.in/yaml.v2 into a list of strings: items that are not scalars
//     are dropped, the others kept as written.
//   - All errors are logged together ("Errors parsing configmap"), and the entries that were read are
//     saved: the authenticator never rejects the ConfigMap as a whole.
//   - Role entries are stored by lower-cased rolearn and user entries by userarn, so a later entry for
//     the same ARN replaces an earlier one.
package awsauth

import (
	"fmt"
	"sort"
	"strings"
)

// The data keys of aws-auth that EKS reads, with the case it matches them in.
const (
	KeyMapRoles    = "mapRoles"
	KeyMapUsers    = "mapUsers"
	KeyMapAccounts = "mapAccounts"
)

// Keys lists the data keys EKS reads, in the order Read reports them.
func Keys() []string { return []string{KeyMapRoles, KeyMapUsers, KeyMapAccounts} }

// RoleMapping is one mapRoles entry EKS keeps.
type RoleMapping struct {
	// RoleARN is the entry's rolearn; empty for an entry that matches by SSO instead.
	RoleARN string
	// SSO is set for an entry that matches the roles of an IAM Identity Center permission set.
	SSO      *SSO
	Username string
	Groups   []string
	// Line is the entry's 1-based line inside the mapRoles value; 0 when it cannot be told.
	Line int
}

// SSO matches the roles IAM Identity Center creates for one permission set in one account:
// arn:<partition>:iam::<account>:role/AWSReservedSSO_<permission set>_<suffix>.
type SSO struct {
	PermissionSetName string
	AccountID         string
	// Partition is empty for the aws partition.
	Partition string
}

// UserMapping is one mapUsers entry EKS keeps.
type UserMapping struct {
	UserARN  string
	Username string
	Groups   []string
	Line     int
}

// Config is what EKS matches identities against: the entries it keeps, without those a later entry
// for the same ARN replaces.
type Config struct {
	MapRoles    []RoleMapping
	MapUsers    []UserMapping
	MapAccounts []string
}

// Effect is what EKS does about a problem.
type Effect int

const (
	// IgnoresValue: the authenticator logs an error and keeps no entry of the data key; it still reads
	// the other keys.
	IgnoresValue Effect = iota + 1
	// DropsEntry: it logs an error and drops the entry, keeping the key's other entries.
	DropsEntry
	// LosesField: it logs an error and keeps the entry without the value of one of its fields (or
	// with an empty group in place of one that is not a string).
	LosesField
	// NoUsername: it keeps the entry and maps its ARN to the empty username; nothing is logged.
	NoUsername
	// NotRead: it never reads the key (a data key, or a key of an entry); nothing is logged.
	NotRead
	// ReadAsWritten: it reads the value as written, which is not what the value seems to mean (a list
	// of groups that parses as one group, an account id of the wrong form); nothing is logged.
	ReadAsWritten
	// Overridden: a later entry for the same ARN replaces the entry; nothing is logged.
	Overridden
	// Ambiguous: another entry's ARN differs from this one's only in case, and EKS matches an identity
	// against whichever of them its map yields first; nothing is logged.
	Ambiguous
)

// String names the effect, for tests and debugging.
func (e Effect) String() string {
	switch e {
	case IgnoresValue:
		return "ignores-value"
	case DropsEntry:
		return "drops-entry"
	case LosesField:
		return "loses-field"
	case NoUsername:
		return "no-username"
	case NotRead:
		return "not-read"
	case ReadAsWritten:
		return "read-as-written"
	case Overridden:
		return "overridden"
	case Ambiguous:
		return "ambiguous"
	}
	return fmt.Sprintf("Effect(%d)", int(e))
}

// Malformed reports whether the effect leaves part of what is written unread or unusable: a value or
// entry dropped, a field lost, an entry without username. Parse reports only these.
func (e Effect) Malformed() bool {
	switch e {
	case IgnoresValue, DropsEntry, LosesField, NoUsername:
		return true
	}
	return false
}

// Logged reports whether aws-iam-authenticator logs the problem (as one of its "Errors parsing
// configmap"); the others it accepts silently.
func (e Effect) Logged() bool {
	return e == IgnoresValue || e == DropsEntry || e == LosesField
}

// Problem is one place where what EKS reads differs from what is written.
type Problem struct {
	// Key is the data key (mapRoles, mapUsers, mapAccounts, or a key EKS never reads).
	Key string
	// Line is 1-based inside the key's value; 0 when the problem is the whole value or the key.
	Line int
	// Message says what is written wrong.
	Message string
	// Effect is what EKS does about it, and Outcome says so in words ("EKS drops this entry and keeps
	// the others").
	Effect  Effect
	Outcome string
	// Field is the entry field concerned (rolearn, userarn, sso, username, groups, userid); "" for a
	// whole entry, a whole value or a data key.
	Field string
	// Meant is what a key EKS never reads seems meant to be (mapRoles for maproles, username for
	// usernmae); "" when nothing is close.
	Meant string
	// Entry is the mapRoles or mapUsers entry the problem is in; nil otherwise.
	Entry *Entry
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", p.Key, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.Key, p.Message)
}

// Entry is a mapRoles or mapUsers entry as written, kept by EKS or not.
type Entry struct {
	// Index is the entry's 0-based position in its list; Line its 1-based line inside the value (0 when
	// it cannot be told).
	Index, Line int
	// ARN is the entry's rolearn (userarn) as written, when it is a string.
	ARN string
	// Nodes reports whether a mapRoles entry is written for nodes: its username starts with
	// system:node:, or it names system:nodes or system:bootstrappers anywhere (even where EKS cannot
	// read it).
	Nodes bool
	// Kept reports whether EKS keeps the entry (possibly without a field, or replaced by a later one).
	Kept bool
}

// Reading is the aws-auth data as EKS reads it.
type Reading struct {
	// Config is what EKS matches identities against.
	Config Config
	// Roles holds every mapRoles entry as written, in order, kept or not.
	Roles []Entry
	// Problems lists where EKS reads something other than what is written: the keys EKS reads in the
	// order of Keys, then the data keys it never reads, sorted; inside a key, by line.
	Problems []Problem
}

// Read reads aws-auth data the way EKS's authenticator does.
func Read(data map[string]string) Reading {
	var r Reading
	if v, ok := data[KeyMapRoles]; ok {
		roles, entries, ps := readRoles(v)
		r.Config.MapRoles, r.Roles = roles, entries
		r.Problems = append(r.Problems, ps...)
	}
	if v, ok := data[KeyMapUsers]; ok {
		users, ps := readUsers(v)
		r.Config.MapUsers = users
		r.Problems = append(r.Problems, ps...)
	}
	if v, ok := data[KeyMapAccounts]; ok {
		accounts, ps := readAccounts(v)
		r.Config.MapAccounts = accounts
		r.Problems = append(r.Problems, ps...)
	}
	var unread []string
	for k := range data {
		if k != KeyMapRoles && k != KeyMapUsers && k != KeyMapAccounts {
			unread = append(unread, k)
		}
	}
	sort.Strings(unread)
	for _, k := range unread {
		r.Problems = append(r.Problems, unreadKey(k))
	}
	return r
}

// Parse returns what EKS matches identities against, and the problems that make the ConfigMap
// malformed (Effect.Malformed): the values and entries it drops, the fields it loses, the entries it
// keeps without username. The others, such as data keys it never reads, are in Read's problems only.
func Parse(data map[string]string) (Config, []Problem) {
	r := Read(data)
	var problems []Problem
	for _, p := range r.Problems {
		if p.Effect.Malformed() {
			problems = append(problems, p)
		}
	}
	return r.Config, problems
}

// unreadKey is the problem of a data key EKS never reads.
func unreadKey(k string) Problem {
	p := Problem{Key: k, Effect: NotRead, Message: "EKS never reads this data key",
		Outcome: "EKS reads only mapRoles, mapUsers and mapAccounts, with exactly that case, and ignores this key"}
	if m := closest(k, Keys(), normalizeDataKey); m != "" {
		p.Meant = m
		p.Message += fmt.Sprintf(" (did you mean %s?)", m)
	}
	return p
}

// normalizeDataKey folds the spellings of a data key that stand for the same word: case, and the
// separators a ConfigMap key may hold.
func normalizeDataKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' {
			return -1
		}
		return r
	}, strings.ToLower(k))
}
