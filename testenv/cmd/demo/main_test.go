package main

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestLoadConfigReadsTheEnvironment(t *testing.T) {
	t.Setenv("DEMO_SECONDS", "")
	t.Setenv("DEMO_RATE", "")
	c, err := loadConfig()
	if err != nil || c.seconds != 60 || c.rate != 20 {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	t.Setenv("DEMO_SECONDS", "7")
	t.Setenv("DEMO_RATE", "2.5")
	if c, err := loadConfig(); err != nil || c.seconds != 7 || c.rate != 2.5 {
		t.Errorf("set: %+v, %v", c, err)
	}
	for _, bad := range []string{"0", "-3", "soon"} {
		t.Setenv("DEMO_SECONDS", bad)
		if _, err := loadConfig(); err == nil {
			t.Errorf("DEMO_SECONDS=%s accepted", bad)
		}
	}
}

func TestRepoRootFindsTheCommand(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "kinformer", "main.go")); err != nil {
		t.Error(err)
	}
}
