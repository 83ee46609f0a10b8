#!/bin/sh
# The emulate engine against the step engine and the CPU, on one program:
#   engines.sh CACHETRACE SRCDIR SCRATCH SRC [RUNS]
# SRC is a C or C++ file under SRCDIR (a "real-pkg: PKG" line links a
# pkg-config package, "oracle-cflags: ..." adds flags); RUNS (default
# "region sw lockstep") picks the checks:
#   region    --start=work (main without one) with call stacks, the
#             Callgrind and folded outputs and --trace-mem (stepped by
#             the lockstep engine where lockstep is asked for too)
#   flat      --start=work, the flat profile only (large regions: the
#             first 400,000 instructions, 16 s stepped here; 150,000
#             with lockstep-cap, whose run is then the step side)
#   uc-pages  the region with Unicorn's own page collection per store
#             (CACHETRACE_HOST=uc-pages=qemu) against stepping
#   models    --start=work with the costlier models (hier, TAGE) and
#             --trace-mem, which the emulator feeds from a thread of their
#             own when two CPUs are allowed (src/engine/modelq.h): the
#             same files as stepped, and again on one CPU (in the
#             engine's thread)
#   emulated  the emulate engine alone over the region, with call stacks:
#             the program's output and status (the sanitizer pass)
#   whole     the whole run (the dynamic loader, lazy binding, exit)
#   sw        --start with --breakpoints=sw and --max-instructions
#   lockstep  --engine=lockstep over the region: 0 divergences (the
#             region's run, where there was one)
#   lockstep-cap  the same over the region's first 150,000 instructions
#             (ENGINES_LOCKSTEP_CAP=N: both over the first N at most,
#             tests/run.sh's pass with the host probes' other answers,
#             which concern every instruction alike)
#   lockstep-avx2  lockstep with glibc told to leave AVX-512 alone (its
#             AVX2 string functions, as on an AVX2-only host)
#   lockstep-threads  --threads=all with every thread emulated: 0
#             divergences, the output and status as natively
#   instrument  --engine=instrument over the region against stepping (the
#             same profile, the program as natively) and the summary's
#             count of instructions run from the code cache (not 0)
#   instrument-signal  the program run with the arguments "5000 1"
#             (tests/emulate/icache.c: a timer's signal while it spins in
#             one block of the cache): its output and exit status as
#             natively, and at least one stop inside the cache recovered
#   lockstep-instrument  --engine=lockstep:instrument over the region: the
#             instrument engine's events compared with the step engine's,
#             none differing; its profile the step engine's, the program
#             as natively
#   lockstep-instrument-cap  the same over the region's first 150,000
#             instructions
#   lockstep-instrument-whole  the same over the whole run (the dynamic
#             loader, lazy binding, exit)
#   lockstep-instrument-threads  the same with --threads=all: 0
#             divergences, the output and status as natively
#   lockstep-instrument-selftest  the same must fail where the instrument
#             engine is wrong: the ring's first address of a window moved
#             by a line (CACHETRACE_TEST_RING_SKEW)
#   lockstep-selftest  lockstep must fail where the emulator is wrong: with
#             x87 arithmetic emulated (CACHETRACE_EMULATE_X87), which
#             QEMU gets wrong (the status word's precision flag)
# Every file the two engines write must be identical (the profile but for
# its "desc: Engine:" line), and so must the program's output and exit
# status, which must also be the native run's.
set -u
CT=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3; SRC=$4
RUNS=${5:-region sw lockstep}
# ENGINES_ONLY (tests/run.sh's pass with the host probes' other answers):
# of RUNS only those it names.
if [ -n "${ENGINES_ONLY:-}" ]; then
	keep=
	for r in $RUNS; do
		case " $ENGINES_ONLY " in *" $r "*) keep="$keep $r" ;; esac
	done
	[ -n "$keep" ] || { echo "FAIL: none of $RUNS in ENGINES_ONLY"; exit 1; }
	RUNS=$keep
fi
NAME=$(basename "$SRC" | sed 's/\.[a-z]*$//')
ME=engines-$NAME
# one directory per program and checks: the emuasan suite's run of a
# program (its "emulated" checks) may run beside the emulate suite's
W=$SCRATCH/$ME.$(echo "$RUNS" | tr -c 'a-z0-9\n' '-')
rm -rf "$W" && mkdir -p "$W" && W=$(realpath "$W") && cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
die() { echo "FAIL: $*"; exit 1; }

src=$SRCDIR/$SRC
[ -f "$src" ] || die "no $src"
pkg=$(sed -n 's/.*real-pkg: *\([^ *]*\).*/\1/p' "$src" | head -n 1)
xflags=$(sed -n 's/.*oracle-cflags: *\([^*]*\).*/\1/p' "$src" | head -n 1)
libs=
[ -n "$pkg" ] && { libs=$(pkg-config --cflags --libs "$pkg") ||
	die "pkg-config $pkg: run tests/install-deps.sh"; }
case $src in
*.cc) cc=${CXX:-c++} ;;
*) cc=${CC:-cc} ;;
esac
# shellcheck disable=SC2086
$cc -O2 -g -fno-pie -no-pie -pthread $xflags -o "$NAME" "$src" $libs ||
	die "cannot build $src"
./"$NAME" >native.out 2>native.err
native_rc=$?
[ $native_rc -eq 77 ] && die "$NAME cannot run on this machine"
start=work
nm "$NAME" | grep -qw 'T work' || start=main

# run ENGINE TAG [options]: cachetrace's files in TAG.ENGINE.*
# A step run with the options and environment of an earlier one is that
# run's files again (the step engine is the suite's slowest): step_key
# OPTIONS... is their key, step_is KEY TAG records the run that has it.
step_key() {
	printf '%s|' "${CACHETRACE_HOST:-}" "${CACHETRACE_TEST_RING_SKEW:-}" \
		"${GLIBC_TUNABLES:-}" "${CACHETRACE_EMULATE_X87:-}" "$@" |
		md5sum | cut -c1-16
}
step_is() { echo "$2" >"step-$1.tag"; }
run() {
	e=$1; tag=$2; shift 2
	if [ "$e" = step ]; then
		key=$(step_key "$@")
		if [ -f "step-$key.tag" ]; then
			was=$(cat "step-$key.tag")
			for x in cg out err rc; do
				cp "$was.step.$x" "$tag.step.$x"
			done
			return
		fi
	fi
	"$CT" --engine="$e" -o "$tag.$e.cg" "$@" -- ./"$NAME" \
		>"$tag.$e.out" 2>"$tag.$e.err"
	echo $? >"$tag.$e.rc"
	[ "$e" = step ] && step_is "$key" "$tag"
	return 0
}

# same TAG FILE-SUFFIX...: the step and emulate (or $OTHER) files of TAG
# are identical
same() {
	tag=$1; shift
	for sfx in "$@"; do
		a=$tag.step.$sfx; b=$tag.${OTHER:-emulate}.$sfx
		if [ "$sfx" = cg ] || [ "$sfx" = callgrind ]; then
			grep -v '^desc: Engine:' "$a" >a.tmp
			grep -v '^desc: Engine:' "$b" >b.tmp
			a=a.tmp; b=b.tmp
		fi
		if cmp -s "$a" "$b"; then
			pass "$tag: $sfx identical"
		else
			fail "$tag: $sfx differs between the engines"
			diff "$a" "$b" | head -n 10
		fi
	done
}

# target TAG ENGINE...: the program did what it does natively
target() {
	tag=$1; shift
	for e in "$@"; do
		rc=$(cat "$tag.$e.rc")
		[ "$rc" = "$native_rc" ] && pass "$tag $e: exit $rc as natively" ||
			{ fail "$tag $e: exit $rc, natively $native_rc"; tail -n 5 "$tag.$e.err"; }
		cmp -s native.out "$tag.$e.out" && pass "$tag $e: output as natively" ||
			fail "$tag $e: the program printed something else"
	done
}

for r in $RUNS; do
	case $r in
	region)
		# Where lockstep is asked for too, its run is the step side:
		# the step engine's, each instruction also emulated and
		# compared (its files are a step run's, the emulator beside),
		# which the lockstep check then reads rather than stepping
		# the region a second time.
		se=step
		case " $RUNS " in *" lockstep "*) se=lockstep ;; esac
		for e in $se emulate; do
			run $e region --start=$start --call-stacks=yes \
				--callgrind-out-file=region.$e.callgrind \
				--folded-out-file=region.$e.folded \
				--trace-mem=region.$e.mem
		done
		if [ $se = lockstep ]; then
			for x in cg out err rc callgrind folded mem; do
				cp region.lockstep.$x region.step.$x
			done
		fi
		target region step emulate
		same region cg callgrind folded mem
		# its flat profile is a plain run's (instrument below)
		step_is "$(step_key --start=$start)" region
		grep -Eq 'Engine: emulate: [1-9][0-9]* instructions emulated' \
			region.emulate.err && pass "region: the summary names the engine" ||
			fail "region: no engine line in the summary"
		;;
	models)
		for e in step emulate instrument; do
			run $e models --start=$start --model=hier \
				--branch-model=tage --trace-mem=models.$e.mem
		done
		target models step emulate instrument
		same models cg mem
		OTHER=instrument; same models cg mem; OTHER=
		# The thread is used where two CPUs are allowed and it is not
		# forced off (the suite's second pass forces it off).
		cpus=$(taskset -c -p $$ | sed 's/.*: //' | tr ',' '\n' |
			awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }')
		case ${CACHETRACE_HOST:-} in
		*model-thread=no*) cpus=1 ;;
		esac
		if [ "$cpus" -ge 2 ]; then
			grep -q 'the models on CPU [0-9]' models.emulate.err &&
				pass "models: fed from a thread of their own" ||
				fail "models: no model thread with $cpus CPUs"
		fi
		cpu=$(taskset -c -p $$ | sed 's/.*: //; s/[,-].*//')
		taskset -c "$cpu" "$CT" --engine=emulate -o one.cg --start=$start \
			--model=hier --branch-model=tage --trace-mem=one.mem \
			-- ./"$NAME" >/dev/null 2>one.err
		grep -q 'the models on CPU' one.err &&
			fail "models: a model thread on one CPU"
		grep -v '^desc: Engine:' models.emulate.cg >a.tmp
		grep -v '^desc: Engine:' one.cg >b.tmp
		cmp -s a.tmp b.tmp && cmp -s models.emulate.mem one.mem &&
			pass "models: the same on one CPU" ||
			fail "models: one CPU gives another profile or trace"
		;;
	emulated)
		run emulate emulated --start=$start --call-stacks=yes \
			--callgrind-out-file=emulated.callgrind
		target emulated emulate
		;;
	uc-pages)
		# Unicorn's own page collection on every guest store (the
		# path other Unicorn builds take, src/engine/ucpages.c),
		# against stepping in the same environment.
		for e in step emulate; do
			CACHETRACE_HOST=${CACHETRACE_HOST:+$CACHETRACE_HOST,}uc-pages=qemu \
				run $e ucpages --start=$start
		done
		target ucpages step emulate
		same ucpages cg
		CACHETRACE_HOST=uc-pages=qemu "$CT" --check 2>&1 |
			grep -q "builds QEMU's page collection (CACHETRACE_HOST" &&
			pass "uc-pages: --check says so" ||
			fail "uc-pages: --check does not say QEMU's path is forced"
		;;
	flat)
		# (after lockstep-cap, over its 150,000: its run is the step
		# side, as it stands for a step run with its options)
		fc=400000
		case " $RUNS " in *" lockstep-cap "*) fc=150000 ;; esac
		for e in step emulate; do
			run $e flat --start=$start --max-instructions=$fc
		done
		target flat step emulate
		same flat cg
		;;
	instrument)
		for e in step instrument; do
			run $e instr --start=$start
		done
		target instr step instrument
		OTHER=instrument; same instr cg; OTHER=
		n=$(sed -n 's/.*Engine: instrument: \([0-9]*\) instructions from the code cache.*/\1/p' instr.instrument.err)
		[ "${n:-0}" -gt 0 ] &&
			pass "instrument: $n instructions ran from the code cache" ||
			{ fail "instrument: nothing ran from the code cache"; grep -i 'engine\|note' instr.instrument.err; }
		# The start event an int3: its page is the process's own copy
		# now, still the file's code; as much runs from the cache (the
		# whole page was stepped: a window 1,800x slower).
		run instrument instrsw --start=$start --breakpoints=sw
		nsw=$(sed -n 's/.*Engine: instrument: \([0-9]*\) instructions from the code cache.*/\1/p' instrsw.instrument.err)
		[ "${nsw:-0}" -ge $(( ${n:-0} - 16 )) ] &&
			[ "${nsw:-0}" -le $(( ${n:-0} + 16 )) ] &&
			pass "instrument: with an int3 start, $nsw from the cache" ||
			fail "instrument: with an int3 start, ${nsw:-none} from the cache, not about $n"
		;;
	instrument-signal)
		"$CT" --engine=instrument -o isig.cg --start=$start -- \
			./"$NAME" 5000 1 >isig.out 2>isig.err
		rc=$?
		[ $rc -eq 0 ] && cmp -s native.out isig.out &&
			pass "instrument-signal: output and exit status as natively" ||
			{ fail "instrument-signal: exit $rc"; tail -n 3 isig.err; }
		n=$(sed -n 's/.*exits, \([0-9]*\) stops inside.*/\1/p' isig.err)
		[ "${n:-0}" -ge 1 ] &&
			pass "instrument-signal: $n stops inside the cache recovered" ||
			fail "instrument-signal: no stop inside the cache"
		;;
	whole)
		for e in step emulate; do
			run $e whole
		done
		target whole step emulate
		same whole cg
		;;
	sw)
		for e in step emulate; do
			run $e sw --start=$start --breakpoints=sw \
				--max-instructions=3000
		done
		same sw cg
		;;
	lockstep|lockstep-cap)
		cap=
		[ "$r" = lockstep-cap ] && cap=150000
		[ -n "${ENGINES_LOCKSTEP_CAP:-}" ] &&
			[ "${cap:-$ENGINES_LOCKSTEP_CAP}" -ge "$ENGINES_LOCKSTEP_CAP" ] &&
			cap=$ENGINES_LOCKSTEP_CAP
		cap=${cap:+--max-instructions=$cap}
		if [ -z "$cap" ] && [ -f region.lockstep.rc ]; then
			# the region's run was this check's (region above; $W
			# starts empty)
			for x in cg out err rc; do
				cp region.lockstep.$x lockstep.lockstep.$x
			done
		else
			run lockstep lockstep --start=$start $cap
		fi
		target lockstep lockstep
		# its profile is the step engine's (each instruction stepped):
		# a step run with its options is these files
		for x in cg out err rc; do
			cp lockstep.lockstep.$x lsstep.step.$x
		done
		step_is "$(step_key --start=$start $cap)" lsstep
		if grep -q 'Lockstep: [1-9][0-9]* instructions compared, 0 divergences' \
			lockstep.lockstep.err; then
			pass "lockstep: $(grep -o 'Lockstep: .*' lockstep.lockstep.err)"
		else
			fail "lockstep: $(grep -o 'Lockstep: .*' lockstep.lockstep.err)"
			grep 'lockstep: divergence' lockstep.lockstep.err | head -n 3
		fi
		;;
	lockstep-avx2)
		# glibc's AVX2 string functions (xtest, vpcmpeqb, vpmovmskb,
		# tzcnt...) where it would pick the EVEX ones: what an
		# AVX2-only host runs, on our own CPU and compared.
		GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD \
			run lockstep avx2 --start=$start
		target avx2 lockstep
		grep -q 'Lockstep: [1-9][0-9]* instructions compared, 0 divergences' \
			avx2.lockstep.err &&
			pass "avx2: $(grep -o 'Lockstep: .*' avx2.lockstep.err)" ||
			{ fail "avx2: $(grep -o 'Lockstep: .*' avx2.lockstep.err)"
			  grep 'lockstep: divergence' avx2.lockstep.err | head -n 3; }
		;;
	lockstep-threads)
		# Every thread emulated in one window (--threads=all, turns of
		# 64 instructions), each checked against the CPU: a thread held inside a
		# futex wait must finish it on the CPU, never run on from the
		# kernel's restart code (glibc aborted: "The futex facility
		# returned an unexpected error code").
		run lockstep threads \
			--threads=all --start=$start
		target threads lockstep
		grep -q 'Lockstep: [1-9][0-9]* instructions compared, 0 divergences' \
			threads.lockstep.err &&
			pass "threads: $(grep -o 'Lockstep: .*' threads.lockstep.err)" ||
			{ fail "threads: $(grep -o 'Lockstep: .*' threads.lockstep.err)"
			  grep 'lockstep: divergence' threads.lockstep.err | head -n 3; }
		;;
	lockstep-instrument|lockstep-instrument-cap|lockstep-instrument-whole)
		opts="--start=$start"
		[ "$r" = lockstep-instrument-cap ] &&
			opts="$opts --max-instructions=150000"
		[ "$r" = lockstep-instrument-whole ] && opts=
		run step li $opts
		run lockstep:instrument li $opts
		target li lockstep:instrument
		OTHER=lockstep:instrument same li cg
		if grep -q 'Lockstep: [1-9][0-9]* events .* compared with the step engine.s, 0 windows diverged' \
			li.lockstep:instrument.err; then
			pass "li: $(grep -o 'Lockstep: .*' li.lockstep:instrument.err)"
		else
			fail "li: $(grep -o 'Lockstep: .*' li.lockstep:instrument.err)"
			grep 'lockstep: divergence' li.lockstep:instrument.err | head -n 3
		fi
		grep -Eq 'Engine: instrument: [1-9][0-9]* instructions from the code cache' \
			li.lockstep:instrument.err && pass "li: instructions ran from the cache" ||
			fail "li: nothing ran from the code cache"
		;;
	lockstep-instrument-threads)
		# --threads=all: one thread at a time in the cache (the one
		# the proof follows, run from int3 to int3 there), the others
		# stepped meanwhile: an int3 taken out at another thread's
		# stop let the first run on unseen (a divergence, every run)
		run lockstep:instrument lit --threads=all --start=$start
		target lit lockstep:instrument
		grep -q 'Lockstep: [1-9][0-9]* events .* compared with the step engine.s, 0 windows diverged' \
			lit.lockstep:instrument.err &&
			pass "lit: $(grep -o 'Lockstep: .*' lit.lockstep:instrument.err)" ||
			{ fail "lit: $(grep -o 'Lockstep: .*' lit.lockstep:instrument.err)"
			  grep 'lockstep: divergence' lit.lockstep:instrument.err | head -n 3; }
		;;
	lockstep-instrument-selftest)
		CACHETRACE_TEST_RING_SKEW=1 run lockstep:instrument lis --start=$start
		rc=$(cat lis.lockstep:instrument.rc)
		[ "$rc" = 1 ] && pass "li selftest: exit 1" ||
			fail "li selftest: exit $rc, expected 1"
		grep -Eq 'lockstep: divergence at 0x[0-9a-f]+ in .*the step engine: (load|store|modify) of [0-9]+ bytes at 0x[0-9a-f]+ by 0x[0-9a-f]+; the instrument engine: (load|store|modify) ' \
			lis.lockstep:instrument.err &&
			pass "li selftest: $(grep -o 'divergence at .*' lis.lockstep:instrument.err | head -n 1)" ||
			fail "li selftest: no divergence of an access reported"
		grep -Eq 'Lockstep: [0-9]+ events .*, 1 window diverged' \
			lis.lockstep:instrument.err && pass "li selftest: counted" ||
			fail "li selftest: the summary counts no divergence"
		cmp -s native.out lis.lockstep:instrument.out &&
			pass "li selftest: the program ran as natively" ||
			fail "li selftest: the program printed something else"
		;;
	lockstep-selftest)
		# (the divergence: work's first x87 division, in its first
		# hundred instructions)
		CACHETRACE_EMULATE_X87=1 run lockstep selftest --start=$start \
			--max-instructions=10000
		rc=$(cat selftest.lockstep.rc)
		[ "$rc" = 1 ] && pass "selftest: exit 1" ||
			fail "selftest: exit $rc, expected 1"
		grep -Eq 'lockstep: divergence at 0x[0-9a-f]+ in .*: f[a-z]+ .*x87' \
			selftest.lockstep.err &&
			pass "selftest: $(grep -o 'divergence at .*' selftest.lockstep.err | head -n 1)" ||
			fail "selftest: no x87 divergence reported"
		grep -Eq 'Lockstep: [0-9]+ instructions compared, [1-9][0-9]* divergences?' \
			selftest.lockstep.err && pass "selftest: counted" ||
			fail "selftest: the summary counts no divergence"
		cmp -s native.out selftest.lockstep.out &&
			pass "selftest: the program ran as natively (the CPU's results)" ||
			fail "selftest: the program printed something else"
		;;
	*)
		die "unknown run '$r'"
		;;
	esac
done
[ "$fails" -eq 0 ] && echo "$ME: all passed" && exit 0
exit 1
