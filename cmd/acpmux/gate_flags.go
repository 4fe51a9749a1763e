package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
)

// gateFlags are the plan-mode gate, policy and circuit-breaker flags of
// "acpmux run" and "acpmux demo" (docs/plan-mode.md, docs/policy.md).
type gateFlags struct {
	mode               string
	lockMode           bool
	policy             string
	breakerConsecutive int
	breakerWindowMax   int
	breakerWindow      time.Duration
	noAgentPlanMode    bool
}

func (f *gateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "mode", "default", "gate mode every session starts in: plan or default")
	fs.BoolVar(&f.lockMode, "lock-mode", false, "keep the gate where --mode put it: hosts and the agent cannot change it")
	fs.StringVar(&f.policy, "policy", "", "policy rules file (TOML [[rule]] tables, see docs/policy.md): a regular file of at most 1 MiB; reloaded on SIGHUP")
	fs.IntVar(&f.breakerConsecutive, "breaker-consecutive", confirm.DefaultBreakerConsecutive, "consecutive denials in a session that cancel the prompt turn (0: off)")
	fs.IntVar(&f.breakerWindowMax, "breaker-max", confirm.DefaultBreakerWindowMax, "denials within --breaker-window that cancel the prompt turn (0: off)")
	fs.DurationVar(&f.breakerWindow, "breaker-window", confirm.DefaultBreakerWindow, "sliding window of --breaker-max")
	fs.BoolVar(&f.noAgentPlanMode, "no-agent-plan-mode", false, "when the gate enters plan mode, leave the agent's own mode alone (by default acpmux also selects the agent's plan mode, if it offers one)")
}

// gateConfig is the validated gate configuration of one relay.
type gateConfig struct {
	mode       gate.Mode
	lock       bool
	policyPath string
	policy     *policy.Policy
	agent      string
	breaker    confirm.Breaker
	// noAgentPlan is --no-agent-plan-mode.
	noAgentPlan bool
}

// load validates the flags and reads the policy file: a malformed file is
// an error at start.
func (f *gateFlags) load(argv []string) (*gateConfig, error) {
	m, err := gate.ParseMode(f.mode)
	if err != nil {
		return nil, fmt.Errorf("--mode: %w", err)
	}
	if f.breakerWindow <= 0 {
		return nil, fmt.Errorf("--breaker-window %v: must be more than 0", f.breakerWindow)
	}
	g := &gateConfig{mode: m, lock: f.lockMode, policyPath: f.policy, noAgentPlan: f.noAgentPlanMode,
		breaker: confirm.Breaker{Consecutive: offIfZero(f.breakerConsecutive), WindowMax: offIfZero(f.breakerWindowMax), Window: f.breakerWindow}}
	if len(argv) > 0 {
		g.agent = filepath.Base(argv[0])
	}
	if f.policy != "" {
		if g.policy, err = policy.Load(f.policy); err != nil {
			return nil, fmt.Errorf("--policy: %w", err)
		}
	}
	return g, nil
}

// offIfZero maps a flag's 0 ("off") to confirm.Breaker's -1.
func offIfZero(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// apply returns o with the gate settings.
func (g *gateConfig) apply(o confirm.Options) confirm.Options {
	o.Mode, o.LockMode, o.Policy, o.Agent, o.Breaker = g.mode, g.lock, g.policy, g.agent, g.breaker
	return o
}

// watchReload reloads the policy file into br on every SIGHUP until stop is
// called; a file that fails to load keeps the old rules (logged as an
// error). stop waits for the watcher to end.
func (g *gateConfig) watchReload(br *confirm.Broker, log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	if g.policyPath != "" {
		log.Debug("SIGHUP reloads the policy from now on", "file", g.policyPath)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				g.reload(br, log)
			}
		}
	})
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}

// reload reads the policy file again (SIGHUP).
func (g *gateConfig) reload(br *confirm.Broker, log *slog.Logger) {
	if g.policyPath == "" {
		log.Info("SIGHUP: no --policy file to reload")
		return
	}
	p, err := policy.Load(g.policyPath)
	if err != nil {
		_, rev := br.Policy()
		log.Error("SIGHUP: policy reload failed; keeping the old rules", "file", g.policyPath, "revision", rev, "err", err)
		return
	}
	rev := br.SetPolicy(p)
	log.Info("SIGHUP: policy reloaded", "file", g.policyPath, "rules", len(p.Rules), "revision", rev)
}
