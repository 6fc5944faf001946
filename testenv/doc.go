// Package testenv runs a real Kubernetes control plane on the loopback interface for tests
// and demos: an etcd and a kube-apiserver, each a child process, compiled from their Go
// modules (go.etcd.io/etcd/server/v3 and k8s.io/kubernetes, pinned in the nested
// controlplane module) by the go command on first use and cached. Nothing is downloaded at
// run time except Go modules, by the go command.
//
//	env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
//	if err != nil { ... }
//	defer env.Stop()
//	client := env.Clientset()            // or kubernetes.NewForConfig(env.RESTConfig())
//	os.Setenv("KUBECONFIG", env.KubeconfigPath())
//
// # What runs
//
// etcd listens on 127.0.0.1 over plain HTTP, without fsync. The apiserver listens on
// https://127.0.0.1:<port> with a serving certificate signed by a CA made for this Env, and
// authenticates an admin bearer token (group system:masters) under RBAC. No controller
// manager, scheduler or kubelet runs: pods stay Pending, namespaces are not finalized after
// deletion, service accounts are not created (the ServiceAccount admission plugin is off so
// pods can be created anyway). The apiserver never compacts etcd on its own.
//
// Helpers reproduce what informers must survive: CompactEtcd (history lost: 410 Gone),
// StopAPIServer/StartAPIServer/RestartAPIServer (connections refused, watches cut, the watch
// cache rebuilt), and CreatePods/CreateConfigMaps/Parallel to make many objects fast.
//
// # Streaming lists
//
// The WatchList feature gate (watch with sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true) is beta and on by default in
// Kubernetes 1.34 and later, so this apiserver (1.36) serves streaming lists with no extra
// flag: the initial state arrives as ADDED events, followed by a BOOKMARK annotated
// "k8s.io/initial-events-end": "true". They work with the watch cache on and off (without it
// etcd serves them).
//
// # Forcing 410 Gone
//
// CompactEtcd discards etcd's history up to now. What that breaks depends on the apiserver's
// watch cache (measured with this apiserver; the tests of this package check each case):
//
//   - Watch cache off (Options.DisableWatchCache, or --watch-cache-sizes=<resource>#0 in
//     Options.APIServerFlags for one resource): every request reaches etcd, so right after
//     CompactEtcd a watch from an older resource version gets an ERROR event with status 410
//     (reason Expired), and exact lists (resourceVersionMatch=Exact) at an older version and
//     continue tokens issued before the compaction fail with 410.
//   - Watch cache on (the default, as in production): a watch from an older version is
//     served from the cache's event history, which compaction does not shorten, so it still
//     succeeds; so does a streaming list. Exact lists and continue tokens are served from
//     cache snapshots until the apiserver notices the compaction — CompactEtcd records it
//     under etcd's compact_rev_key as the apiserver's own compactor does, and the apiserver
//     polls for it every 15 seconds — then they fail with 410. Poll for the 410; do not sleep.
//   - Restart, watch cache on: the cache starts afresh at the current revision, so after
//     RestartAPIServer a watch from any version older than the restart (with writes after
//     it) gets ERROR 410 "too old resource version", compacted or not. This is the usual way
//     a real informer meets a 410.
//
// # Processes
//
// Each child runs in its own process group with its output appended to a log file in the
// Env's directory (EtcdLogPath, APIServerLogPath, DumpLogs). Stop and the end of Start's
// context stop both with SIGTERM, then SIGKILL after a grace period, reap them and remove the
// directory. On Linux the children also get SIGKILL if the test binary dies without cleaning
// up. testenv runs on Linux and other Unix systems.
package testenv
