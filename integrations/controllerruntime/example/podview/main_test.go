package podview

import (
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kinformer/kinformer/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	goleak.VerifyTestMain(testenv.Tests{M: m, Name: "podview", Env: &env})
}
