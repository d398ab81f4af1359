package validators

import "testing"

// TestMemo: entries beyond those kept in place go to the map, and every key keeps its latest value.
func TestMemo(t *testing.T) {
	var m memo[string, int]
	for round := range 2 {
		for i, k := range []string{"a", "b", "c", "d"} {
			m.put(k, 10*round+i)
		}
	}
	for i, k := range []string{"a", "b", "c", "d"} {
		if v, ok := m.get(k); !ok || v != 10+i {
			t.Errorf("get(%q) = %d, %v; want %d", k, v, ok, 10+i)
		}
	}
	if _, ok := m.get("e"); ok {
		t.Errorf("get of a key never put found a value")
	}
	if len(m.more) != 2 {
		t.Errorf("%d entries in the map, want the 2 beyond those kept in place", len(m.more))
	}
}
