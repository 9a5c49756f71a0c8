package store

import (
	"testing"

	"github.com/catalogbot/catalogbot/internal/pgtest"
)

// TestMain stops the PostgreSQL server the PostgreSQL tests start (pgtest), if any, after the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }
