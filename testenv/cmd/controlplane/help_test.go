package main

import (
	"strings"
	"testing"
)

// -h on any subcommand prints its flags and succeeds, as a person asking
// for help expects: no "flag: help requested" error after the usage.
func TestHelpFlagPrintsUsageAndSucceeds(t *testing.T) {
	for _, args := range [][]string{{"up", "-h"}, {"build", "-help"}, {"assets", "--help"}, {"compact", "-h"}} {
		var out, errOut strings.Builder
		err := run(t.Context(), args, &out, &errOut)
		if err != nil {
			t.Errorf("%q: %v, want no error", args, err)
		}
		if !strings.Contains(errOut.String()+out.String(), "Usage of "+args[0]) {
			t.Errorf("%q printed %q, want its usage", args, errOut.String()+out.String())
		}
	}
}
