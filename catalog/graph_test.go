package catalog

import (
	"reflect"
	"sort"
	"testing"
)

func ch(entries ...ChannelEntry) *Channel {
	return &Channel{Name: "stable", Package: "p", Entries: entries}
}

func TestGraph(t *testing.T) {
	cases := []struct {
		name     string
		c        *Channel
		heads    []string
		cycle    []string
		stranded []string
	}{
		{"linear", ch(ChannelEntry{Name: "a"}, ChannelEntry{Name: "b", Replaces: "a"}, ChannelEntry{Name: "c", Replaces: "b"}), []string{"c"}, nil, nil},
		{"two heads", ch(ChannelEntry{Name: "a"}, ChannelEntry{Name: "b"}), []string{"a", "b"}, nil, nil},
		{"skips cover unchained", ch(ChannelEntry{Name: "a"}, ChannelEntry{Name: "b"}, ChannelEntry{Name: "c", Skips: []string{"a", "b"}}), []string{"c"}, nil, nil},
		{"stranded", ch(ChannelEntry{Name: "a"}, ChannelEntry{Name: "b"}, ChannelEntry{Name: "c", Replaces: "b", Skips: []string{"x"}}), []string{"a", "c"}, nil, nil},
		{"stranded below skip", ch(ChannelEntry{Name: "a"}, ChannelEntry{Name: "b", Replaces: "a"}, ChannelEntry{Name: "c", Replaces: "b", Skips: []string{"b"}}), []string{"c"}, nil, []string{"a"}},
		{"cycle behind head", ch(ChannelEntry{Name: "a", Replaces: "b"}, ChannelEntry{Name: "b", Replaces: "a"}, ChannelEntry{Name: "c", Replaces: "a"}), []string{"c"}, []string{"a", "b", "a"}, nil},
		{"no head", ch(ChannelEntry{Name: "a", Replaces: "b"}, ChannelEntry{Name: "b", Replaces: "a"}), nil, nil, nil},
		{"replaces outside the channel", ch(ChannelEntry{Name: "b", Replaces: "a"}), []string{"b"}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewGraph(c.c)
			if got := g.Heads(); !reflect.DeepEqual(got, c.heads) {
				t.Fatalf("heads %v, want %v", got, c.heads)
			}
			if len(c.heads) != 1 {
				if g.Head() != "" {
					t.Fatalf("Head() = %q with %d heads", g.Head(), len(c.heads))
				}
				return
			}
			chain, cycle := g.ReplacesChain(g.Head())
			if !reflect.DeepEqual(cycle, c.cycle) {
				t.Fatalf("cycle %v, want %v", cycle, c.cycle)
			}
			if cycle != nil {
				return
			}
			stranded := g.Stranded(chain)
			sort.Strings(stranded)
			if !reflect.DeepEqual(stranded, c.stranded) {
				t.Fatalf("stranded %v, want %v", stranded, c.stranded)
			}
		})
	}
}

func TestSkipRangeMatches(t *testing.T) {
	e := ChannelEntry{Name: "x", SkipRange: ">=1.0.0 <1.2.0"}
	for v, want := range map[string]bool{"1.0.0": true, "1.1.9": true, "1.2.0": false, "0.9.0": false, "junk": false} {
		if got := SkipRangeMatches(e, v); got != want {
			t.Errorf("%s: %v, want %v", v, got, want)
		}
	}
	if SkipRangeMatches(ChannelEntry{SkipRange: ">=v1"}, "1.0.0") {
		t.Error("an unparsable range matches nothing")
	}
}
