package images

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/registry"
)

// newPuller builds the one Puller a Check shares, so each repository authenticates once.
func (c *Checker) newPuller(jobs int) (*remote.Puller, error) {
	opts := append(registry.Options(c.Keychain, c.Backoff), remote.WithJobs(jobs))
	p, err := remote.NewPuller(append(opts, c.RemoteOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("image checker: remote options: %w", err)
	}
	return p, nil
}
