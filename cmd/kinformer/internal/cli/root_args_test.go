package cli

import (
	"strings"
	"testing"
)

// Every command that takes resources says what to type when given none,
// in words that fit the command, instead of cobra's argument count.
func TestCommandsWithoutResourceSayWhatToType(t *testing.T) {
	for verb, want := range map[string]string{
		"get":   "name the type of resource to get, as in `kinformer get pods`",
		"watch": "name the type of resource to watch, as in `kinformer watch pods`",
		"stats": "name the type of resource to show the statistics of, as in `kinformer stats pods`",
	} {
		err := resourceArgs(verb)(nil, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s with no resource: %v, want %q", verb, err, want)
		}
		if err := resourceArgs(verb)(nil, []string{"pods"}); err != nil {
			t.Errorf("%s pods: %v", verb, err)
		}
	}
}
