// Command startupfloor links operator-framework's bundle validators (what catalogbot's policy-of-* rules
// run) and nothing else, then exits: the start-up every binary that links them pays before its own code
// runs. bench/startup.sh times it beside `catalogbot version` and `opm version`.
package main

import (
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/validation"
)

func main() {
	// One use of the package, so that it is linked for what it is and not only for its initialisers.
	fmt.Fprintln(os.Stdout, len(validation.AllValidators))
}
