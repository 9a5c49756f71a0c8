package ghaction

import (
	"context"
	"fmt"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/diag"
)

// The Action reads approvals and team membership, and merges, with the workflow's own token
// (GITHUB_TOKEN, or a token the workflow passes as the github-token input): the same REST calls the bot
// makes with its installation token, through the bot's GitHub client in token mode.

// newGitHub is the client of the workflow's token, nil without a token.
func newGitHub(env Env) (ghclient.GitHub, error) {
	token := env("CATALOGBOT_GITHUB_TOKEN")
	if token == "" {
		return nil, nil
	}
	api := env("GITHUB_API_URL")
	clients, err := ghclient.New(ghclient.Config{APIURL: api, Token: token})
	if err != nil {
		return nil, err
	}
	return clients.For(0)
}

// approvers are the logins whose latest review approves the head commit itself (approval.Evaluate's
// Current): a review given on an earlier head does not count after a push, nor does the author's own.
func approvers(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, number int, author, head string) ([]string, error) {
	reviews, err := gh.Reviews(ctx, repo, number)
	if err != nil {
		return nil, err
	}
	res, err := approval.Evaluate(ctx, approval.Input{Head: head, Author: author, Reviews: reviewsOf(reviews)}, nil)
	if err != nil {
		return nil, err
	}
	return res.Current, nil
}

// teams answers owners' org/team questions with GitHub's team membership API.
type teams struct{ gh ghclient.GitHub }

func (t teams) IsMember(ctx context.Context, org, team, login string) (bool, error) {
	ok, err := t.gh.IsTeamMember(ctx, org, team, login)
	if err != nil {
		return false, diag.InfraError(fmt.Errorf("membership of %s in %s/%s: %w", login, org, team, err))
	}
	return ok, nil
}
