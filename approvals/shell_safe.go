package approvals

// The programs a rule derived from an approval may cover with "word:*".

// safeCommand is a program, or a program's subcommand, whose derived rule
// may take any further arguments but those its argPolicy refuses.
type safeCommand struct {
	// why it is safe, from its manual: it runs no other program through
	// its arguments, environment or the files it reads, and writes no file
	// named in them (but what its policy refuses).
	why string
	// named: the next word names what runs (make's target, npm run's
	// script) and becomes part of the rule: "make test:*", not "make:*".
	named bool
	args  argPolicy
}

// safeCommands are the programs "Allow for thread" and "Always allow" may
// widen to "word:*" (or "tool sub:*"), keyed by the command's words. A
// program not listed, or a subcommand not listed, gets the exact command:
// shells, env, sudo, xargs, find, editors, pagers, interpreters, ssh, scp,
// rsync, curl, wget, cp, mv, ln, install, tee, dd, sed, awk, tar, zip,
// kubectl, docker, package installs and everything else a person approves
// one command at a time.
//
// Build and test runners (go test, npm test, make <target>, pytest, cargo
// test) run the project's own code by design: their rule trusts the
// working tree's Makefile, package.json scripts, tests and build files,
// and refuses the options through which a command names another program
// or a file to write.
var safeCommands = map[string]safeCommand{
	"ls":        {why: "lists directory entries; no option runs a program or writes a file"},
	"cat":       {why: "writes files to standard output; no option runs or writes"},
	"head":      {why: "prints the first lines of files; no option runs or writes"},
	"tail":      {why: "prints the last lines of files; no option runs or writes"},
	"wc":        {why: "counts lines, words and bytes; --files0-from only reads names"},
	"grep":      {why: "GNU grep searches files; no option runs a program or writes a file"},
	"diff":      {why: "GNU diff compares files; no option runs a program or writes a file"},
	"cmp":       {why: "compares two files byte by byte"},
	"comm":      {why: "compares two sorted files line by line"},
	"cut":       {why: "prints selected parts of lines"},
	"nl":        {why: "numbers lines"},
	"du":        {why: "estimates file space usage; --files0-from only reads names"},
	"df":        {why: "reports file system space usage"},
	"stat":      {why: "displays file status"},
	"basename":  {why: "strips directory and suffix from names"},
	"dirname":   {why: "strips the last component from names"},
	"realpath":  {why: "prints resolved paths"},
	"readlink":  {why: "prints resolved links"},
	"pwd":       {why: "prints the working directory"},
	"echo":      {why: "writes its arguments to standard output"},
	"true":      {why: "does nothing"},
	"false":     {why: "does nothing, unsuccessfully"},
	"whoami":    {why: "prints the effective user name"},
	"id":        {why: "prints user and group ids"},
	"uname":     {why: "prints system information"},
	"which":     {why: "locates a command on PATH; runs nothing"},
	"sleep":     {why: "waits"},
	"sha256sum": {why: "computes or (-c) checks digests; only reads files"},
	"md5sum":    {why: "computes or (-c) checks digests; only reads files"},
	"date": {why: "prints the date; -s/--set would set the clock",
		args: argPolicy{deny: []string{"-s", "--set"}}},
	"file": {why: "classifies files; -C compiles a magic file (writes), -z/-Z run decompressors",
		args: argPolicy{deny: []string{"-C", "--compile", "-z", "-Z", "--uncompress", "--uncompress-noreport"}}},
	"tree": {why: "lists a directory tree; -o writes the listing to a file",
		args: argPolicy{deny: []string{"-o"}}},
	"sort": {why: "sorts lines; -o/--output writes a file, --compress-program runs one, -T writes temporary files",
		args: argPolicy{deny: []string{"-o", "--output", "--compress-program", "-T", "--temporary-directory"}}},
	"rg": {why: "ripgrep searches files; --pre and --hostname-bin run a program, -z runs decompressors",
		args: argPolicy{deny: []string{"--pre", "--pre-glob", "--hostname-bin", "-z", "--search-zip"}}},

	// git: only subcommands that read. Global options (-c, -C, --git-dir,
	// --exec-path) come before the subcommand, so no derived rule covers
	// them; git's own configuration and hooks are protected places.
	"git status":    {why: "shows the working tree's state; no option runs or writes"},
	"git diff":      {why: "shows changes; --output writes a file", args: gitDiffArgs},
	"git log":       {why: "shows commits; --output writes a file", args: gitDiffArgs},
	"git show":      {why: "shows objects; --output writes a file", args: gitDiffArgs},
	"git blame":     {why: "shows who changed each line; --contents and -S only read"},
	"git ls-files":  {why: "lists files in the index; --exclude-from only reads"},
	"git rev-parse": {why: "prints object names and repository paths"},
	"git describe":  {why: "names a commit after tags"},
	"git shortlog":  {why: "summarises the log"},
	"git grep": {why: "searches tracked files; -O/--open-files-in-pager runs a program",
		args: argPolicy{deny: []string{"-O", "--open-files-in-pager"}}},

	// Go: flags are Go flags (-name, --name, =value; no bundling). Refused:
	// the flags that name a program to run (-exec, -toolexec, -vettool,
	// linker and compiler flags), a file to write (-o, profiles, traces) or
	// another place to read code and settings from (-C, -overlay, -modfile).
	"go test":    {why: "builds and runs the package's tests (project code)", args: goArgs},
	"go build":   {why: "compiles packages (project code); -o names a file to write", args: goArgs},
	"go vet":     {why: "checks packages; -vettool runs a program", args: goArgs},
	"go list":    {why: "lists packages; -toolexec and the build flags are refused", args: goArgs},
	"go version": {why: "prints Go's version, or (-m) a binary's build information"},

	// npm, pnpm, yarn: every --name=value on the command line sets a
	// configuration key (--script-shell runs a program, --userconfig reads
	// one, --prefix moves where it writes), so only these options are
	// accepted; after "--" the words go to the script itself.
	"npm test":  {why: "runs the package's test script (project code)", args: npmArgs},
	"npm run":   {why: "runs the named script of package.json (project code)", named: true, args: npmArgs},
	"pnpm test": {why: "runs the package's test script (project code)", args: npmArgs},
	"pnpm run":  {why: "runs the named script of package.json (project code)", named: true, args: npmArgs},
	"yarn test": {why: "runs the package's test script (project code)", args: npmArgs},
	"yarn run":  {why: "runs the named script of package.json (project code)", named: true, args: npmArgs},

	// make: NAME=value arguments override any variable a recipe runs
	// (SHELL, CC, MAKE), -f/-C/-I/--eval read other makefiles: only the
	// named target and these options.
	"make": {why: "builds the named target of the project's Makefile (project code)", named: true,
		args: argPolicy{noOperands: true, allow: []string{
			"-j=", "--jobs=", "-k", "--keep-going", "-s", "--silent", "--quiet", "-n", "--dry-run",
			"--just-print", "-B", "--always-make", "-w", "--print-directory", "--no-print-directory",
			"-O=", "--output-sync=", "-i", "--ignore-errors", "-q", "--question",
		}}},

	"pytest": {why: "runs the project's tests (project code); plugins' options are refused by listing what is accepted",
		args: argPolicy{allow: []string{
			"-q", "--quiet", "-v", "--verbose", "-x", "--exitfirst", "-s", "-l", "--showlocals",
			"-k=", "-m=", "-r=", "-n=", "--tb=", "--maxfail=", "--lf", "--last-failed", "--ff",
			"--failed-first", "--no-header", "--durations=", "--strict-markers", "--co",
			"--collect-only", "--capture=", "--disable-warnings", "--color=", "--sw", "--stepwise",
		}}},

	// cargo: --config sets any configuration (a target's runner, a rustc
	// wrapper: programs), -Z enables unstable ones, the others name places
	// to read a manifest from or to write to. After "--" the test
	// harness's options are checked too (--logfile writes a file).
	"cargo test":  {why: "builds and runs the crate's tests (project code)", args: cargoArgs},
	"cargo build": {why: "compiles the crate (project code)", args: cargoArgs},
	"cargo check": {why: "checks the crate (project code: build scripts)", args: cargoArgs},
}

var (
	gitDiffArgs = argPolicy{deny: []string{"--output"}}
	goArgs      = argPolicy{goFlags: true, deny: []string{
		"exec", "toolexec", "vettool", "o", "C", "ldflags", "gcflags", "asmflags", "gccgoflags",
		"compiler", "overlay", "modfile", "pkgdir", "mod", "coverprofile", "cpuprofile", "memprofile",
		"blockprofile", "mutexprofile", "trace", "outputdir", "testlogfile", "gocoverdir",
		"fuzzcachedir", "debug-actiongraph", "debug-runtime-trace", "debug-trace",
	}}
	npmArgs   = argPolicy{allow: []string{"-s", "--silent", "--if-present"}}
	cargoArgs = argPolicy{through: true, deny: []string{
		"--config", "-Z", "--manifest-path", "--target-dir", "--artifact-dir", "--out-dir",
		"--lockfile-path", "--logfile",
	}}
)
