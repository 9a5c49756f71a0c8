package bot

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// decodeTask decodes payload as handleJob does for a kind whose task is T.
func decodeTask[T task](payload []byte) (task, error) {
	var t T
	err := json.Unmarshal(payload, &t)
	return t, err
}

// A payload the one task type all kinds once shared wrote (a job queued then) decodes, for each kind, into
// the kind's task with every field its handler reads; and the kind's task writes the same names, so a
// replica still running the shared type reads it.
func TestTaskPayloadsOfEveryKindDecode(t *testing.T) {
	tg := Target{Installation: 7, Repo: "acme/catalog"}
	push := PushTask{Target: tg, DefaultBranch: "main", Before: "b1", After: "a1", Sender: "alice"}
	const pushV1 = `"installation":7,"repo":"acme/catalog","default_branch":"main","sender":"alice","before":"b1","after":"a1"`
	cases := []struct {
		kind    string
		payload string // as the shared type wrote it
		decode  func([]byte) (task, error)
		want    task
		written string // what want writes: payload without what the kind's handler never read ("": payload)
	}{
		{kind: kindCheck,
			payload: `{"installation":7,"repo":"acme/catalog","pr":4,"head_sha":"h1","sender":"bob","reason":"pull_request opened"}`,
			decode:  decodeTask[PullRequestTask],
			want:    PullRequestTask{Target: tg, PR: 4, HeadSHA: "h1", Sender: "bob", Reason: "pull_request opened"}},
		{kind: kindEvaluate,
			payload: `{"installation":7,"repo":"acme/catalog","pr":4,"sender":"bob","sender_bot":true,"review_user":"carol",` +
				`"review_state":"dismissed","label":"do-not-merge/hold","label_action":"unlabeled","reason":"review dismissed by bob"}`,
			decode: decodeTask[PullRequestTask],
			want: PullRequestTask{Target: tg, PR: 4, Sender: "bob", SenderBot: true, ReviewUser: "carol", ReviewState: "dismissed",
				Label: "do-not-merge/hold", LabelAction: "unlabeled", Reason: "review dismissed by bob"}},
		{kind: kindCommand,
			payload: `{"installation":7,"repo":"acme/catalog","pr":4,"sender":"dave","comment_id":99,"comment_at":"2026-05-01T12:00:00Z",` +
				`"commands":[{"name":"approve","arg":"no-issue"},{"name":"hold"}]}`,
			decode: decodeTask[CommandTask],
			want: CommandTask{Target: tg, PR: 4, Sender: "dave", CommentID: 99, CommentAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
				Commands: []Cmd{{Name: "approve", Arg: "no-issue"}, {Name: "hold"}}}},
		{kind: kindPublish, payload: `{` + pushV1 + `}`, decode: decodeTask[PushTask], want: push},
		{kind: kindReleases, payload: `{` + pushV1 + `}`, decode: decodeTask[PushTask], want: push},
		{kind: kindMergeGroup,
			payload: `{"installation":7,"repo":"acme/catalog","head_sha":"h2","sender":"erin","base_sha":"b2","head_ref":"refs/heads/q"}`,
			decode:  decodeTask[MergeGroupTask],
			want:    MergeGroupTask{Target: tg, HeadSHA: "h2", BaseSHA: "b2", HeadRef: "refs/heads/q"},
			written: `{"installation":7,"repo":"acme/catalog","head_sha":"h2","base_sha":"b2","head_ref":"refs/heads/q"}`},
		{kind: kindRelease,
			payload: `{` + pushV1 + `,"bundle":"operators/foo/1.2.0"}`,
			decode:  decodeTask[ReleaseTask],
			want:    ReleaseTask{PushTask: push, Bundle: "operators/foo/1.2.0"}},
		{kind: kindPromotion,
			payload: `{` + pushV1 + `,"catalog":"v4.18","package":"foo"}`,
			decode:  decodeTask[PromotionTask],
			want:    PromotionTask{PushTask: push, Catalog: "v4.18", Package: "foo"}},
	}
	fields := func(t *testing.T, js []byte) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return m
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			got, err := c.decode([]byte(c.payload))
			if err != nil {
				t.Fatalf("decode %s: %v", c.payload, err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("decoded %s\n got %+v\nwant %+v", c.payload, got, c.want)
			}
			written, err := json.Marshal(c.want)
			if err != nil {
				t.Fatal(err)
			}
			want := c.written
			if want == "" {
				want = c.payload
			}
			if g, w := fields(t, written), fields(t, []byte(want)); !reflect.DeepEqual(g, w) {
				t.Errorf("written %s, want the fields of %s", written, want)
			}
		})
	}
}
