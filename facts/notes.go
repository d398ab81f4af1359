package facts

import (
	"context"
	"sync"
)

// Notes collects what a provider wants the reader of a verdict to know about the facts behind it, such
// as "answered from a cache 6m old because AWS throttled iam:GetRole". The engine attaches one to the
// context of each evaluation and returns its notes with the result; the webhook turns them into
// warnings, the CLI prints them. Safe for concurrent use; duplicates are dropped.
type Notes struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

type notesKey struct{}

// WithNotes returns a context whose providers record notes into n.
func WithNotes(ctx context.Context, n *Notes) context.Context {
	return context.WithValue(ctx, notesKey{}, n)
}

// NotesFrom returns the notes of ctx, or nil.
func NotesFrom(ctx context.Context) *Notes {
	n, _ := ctx.Value(notesKey{}).(*Notes)
	return n
}

// Note records a note in ctx's notes, if it has any.
func Note(ctx context.Context, note string) {
	n := NotesFrom(ctx)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[note] {
		return
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	n.seen[note] = true
	n.list = append(n.list, note)
}

// List returns the notes in the order they were recorded.
func (n *Notes) List() []string {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.list...)
}
