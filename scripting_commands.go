package zipline

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ziplinekv/zipline/internal/resp"
)

// Script is a Lua script that runs by its SHA1 digest (EVALSHA), sending
// its source (EVAL) only when the server does not have it cached yet.
// Create it once and reuse it; it is safe for concurrent use.
type Script struct {
	src string
	sha string
}

// NewScript returns a Script for the Lua source src.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(sum[:])}
}

// SHA1 returns the script's digest, as EVALSHA and SCRIPT EXISTS take it.
func (s *Script) SHA1() string { return s.sha }

// Run runs the script with keys and args (encoded as Client.Do encodes
// them). The first time on a server, the EVALSHA fails with NOSCRIPT and
// Run sends the source with EVAL, which also caches it for the next call.
// Every key the script touches must be in keys: that is how it is routed.
func (s *Script) Run(ctx context.Context, c *Client, keys []string, args ...any) (Value, error) {
	cm, err := s.command(specEVALSHA, s.sha, keys, args)
	if err != nil {
		return Value{}, err
	}
	v, err := run(ctx, c, cm)
	if isServerError(err, "NOSCRIPT") {
		cm.args[0] = str(s.src)
		cm.spec = specEVAL
		v, err = run(ctx, c, cm)
	}
	return v, err
}

// Queue queues the script in a Batch, as EVAL: a batch cannot fall back
// from EVALSHA in the middle of its round trip, so it sends the source.
func (s *Script) Queue(b *Batch, keys []string, args ...any) *Future[Value] {
	cm, err := s.command(specEVAL, s.src, keys, args)
	cm.dec = decValue
	return enqueueChecked(b, cm, err)
}

// Load caches the script on the server (SCRIPT LOAD), so that the first
// Run needs no fallback; on a cluster, on every primary.
func (s *Script) Load(ctx context.Context, c *Client) error {
	_, err := run(ctx, c, scriptLoadCmd(s.src))
	return err
}

func (s *Script) command(spec *commandSpec, body string, keys []string, args []any) (command[Value], error) {
	return scriptCmd(spec, body, keys, args)
}

// scriptCmd is a script or function call: body (a script, its SHA1, or a
// function's name), the number of keys, the keys, then args encoded as Do
// encodes them. Its reply is expanded at any depth (see spec_overlay.go).
func scriptCmd(spec *commandSpec, body string, keys []string, args []any) (command[Value], error) {
	cargs := make([]arg, 0, 2+len(keys)+len(args))
	cargs = append(cargs, str(body), num(int64(len(keys))))
	cargs = append(cargs, keyArgs(keys)...)
	for i, a := range args {
		ca, err := anyArg(2+len(keys)+i, a)
		if err != nil {
			return define(decValue, spec), fmt.Errorf("zipline: %s: %w", spec.name, err)
		}
		cargs = append(cargs, ca)
	}
	return define(decValue, spec, cargs...), nil
}

// The scripting and function commands. Each is defined once; go generate
// makes its Client and Batch methods (commands_gen.go). Those that change
// what every node runs (SCRIPT LOAD and FLUSH, FUNCTION LOAD, DELETE,
// FLUSH and RESTORE) run on every primary of a cluster (hand-written
// Client methods); in a batch they go to one node.

// Eval runs a Lua script with keys and args (encoded as Client.Do encodes
// them). Every key the script touches must be in keys: that is how it is
// routed. Script runs it by its SHA1, sending the source only once.
//
//zipline:twins Eval
func evalCmd(script string, keys []string, args ...any) (command[Value], error) {
	return scriptCmd(specEVAL, script, keys, args)
}

// EvalRO is Eval for a read-only script, which a replica may run.
//
//zipline:twins EvalRO
func evalROCmd(script string, keys []string, args ...any) (command[Value], error) {
	return scriptCmd(specEVAL_RO, script, keys, args)
}

// EvalSha runs a script the server has cached, by its SHA1 (NOSCRIPT if
// it has not).
//
//zipline:twins EvalSha
func evalShaCmd(sha1 string, keys []string, args ...any) (command[Value], error) {
	return scriptCmd(specEVALSHA, sha1, keys, args)
}

// EvalShaRO is EvalSha for a read-only script.
//
//zipline:twins EvalShaRO
func evalShaROCmd(sha1 string, keys []string, args ...any) (command[Value], error) {
	return scriptCmd(specEVALSHA_RO, sha1, keys, args)
}

// FCall calls a function of a library loaded with FunctionLoad.
//
//zipline:twins FCall
func fcallCmd(function string, keys []string, args ...any) (command[Value], error) {
	return scriptCmd(specFCALL, function, keys, args)
}

// FCallRO calls a read-only function (flags no-writes), which a replica
// may run.
//
//zipline:twins FCallRO
func fcallROCmd(function string, keys []string, args ...any) (command[Value], error) {
	return scriptCmd(specFCALL_RO, function, keys, args)
}

// ScriptExists reports, for each SHA1, whether the server has the script
// cached; on a cluster, whether every primary has.
//
//zipline:twins ScriptExists
func scriptExistsCmd(sha1s ...string) command[[]bool] {
	return define(decBools, specSCRIPT_EXISTS, strArgs(sha1s)...)
}

// ScriptLoad caches a script and returns its SHA1; on a cluster or a
// Sentinel group, on every node the Client holds a connection to (the
// replicas it reads from too).
//
//zipline:twins ScriptLoad
func scriptLoadCmd(script string) command[string] {
	return define(decString, specSCRIPT_LOAD, str(script))
}

// ScriptFlush empties the script cache; on a cluster, every node's the
// Client holds a connection to.
//
//zipline:twins ScriptFlush client=error
func scriptFlushCmd() command[bool] { return define(decOK, specSCRIPT_FLUSH) }

// ScriptKill stops the script running now, if it has not written; on a
// cluster, wherever one runs (it fails only if none does).
//
//zipline:twins ScriptKill client=error
func scriptKillCmd() command[bool] { return define(decOK, specSCRIPT_KILL) }

// FunctionLoad loads a library of functions (its code starts with
// "#!lua name=...") and returns its name; on a cluster, on every primary.
//
//zipline:twins FunctionLoad
func functionLoadCmd(code string) command[string] {
	return define(decString, specFUNCTION_LOAD, str(code))
}

// FunctionLoadReplace is FunctionLoad replacing a library of that name.
//
//zipline:twins FunctionLoadReplace
func functionLoadReplaceCmd(code string) command[string] {
	return define(decString, specFUNCTION_LOAD, str("REPLACE"), str(code))
}

// FunctionDelete deletes a library; on a cluster, from every primary.
//
//zipline:twins FunctionDelete client=error
func functionDeleteCmd(library string) command[bool] {
	return define(decOK, specFUNCTION_DELETE, str(library))
}

// FunctionFlush deletes every library; on a cluster, from every primary.
//
//zipline:twins FunctionFlush client=error
func functionFlushCmd() command[bool] { return define(decOK, specFUNCTION_FLUSH) }

// FunctionKill stops the function running now, if it has not written.
//
//zipline:twins FunctionKill client=error
func functionKillCmd() command[bool] { return define(decOK, specFUNCTION_KILL) }

// FunctionDump returns every library serialized, for FunctionRestore.
//
//zipline:twins FunctionDump
func functionDumpCmd() command[[]byte] { return define(decBytes, specFUNCTION_DUMP) }

// FunctionRestore loads the libraries FunctionDump returned (APPEND: those
// already there stay, and a name in both fails); on a cluster, on every
// primary.
//
//zipline:twins FunctionRestore client=error
func functionRestoreCmd(data []byte) command[bool] {
	return define(decOK, specFUNCTION_RESTORE, bin(data))
}

// Library is a library of functions, as FUNCTION LIST describes it.
type Library struct {
	Name      string
	Engine    string
	Functions []Function
	Code      string // with FunctionList's withCode
}

// Function is one function of a library.
type Function struct {
	Name        string
	Description string
	Flags       []string
}

// FunctionList describes the libraries whose names match pattern ("": all),
// with their code if withCode.
//
//zipline:twins FunctionList
func functionListCmd(pattern string, withCode bool) command[[]Library] {
	args := make([]arg, 0, 3)
	if pattern != "" {
		args = append(args, str("LIBRARYNAME"), str(pattern))
	}
	if withCode {
		args = append(args, str("WITHCODE"))
	}
	return define(decLibraries, specFUNCTION_LIST, args...)
}

var decLibraries = newDecoder(tsList, func(v resp.Value) ([]Library, error) {
	return each(v, func(l resp.Value) (Library, error) {
		m := fieldMap(l)
		lib := Library{Name: string(m["library_name"].Bytes()), Engine: string(m["engine"].Bytes()),
			Code: string(m["library_code"].Bytes())}
		fns, err := each(m["functions"], func(f resp.Value) (Function, error) {
			fm := fieldMap(f)
			fn := Function{Name: string(fm["name"].Bytes()), Description: string(fm["description"].Bytes())}
			for _, fl := range fm["flags"].Elems() {
				fn.Flags = append(fn.Flags, string(fl.Bytes()))
			}
			return fn, nil
		})
		lib.Functions = fns
		return lib, err
	})
})

// FunctionFlushAsync is FunctionFlush, the memory reclaimed in the
// background.
//
//zipline:twins FunctionFlushAsync client=error
func functionFlushAsyncCmd() command[bool] { return define(decOK, specFUNCTION_FLUSH, str("ASYNC")) }

// FunctionStats is what FUNCTION STATS says: the function running now, if
// any, and per engine how many libraries and functions are loaded.
type FunctionStats struct {
	Running *RunningScript
	Engines map[string]EngineStats
}

// RunningScript is a function or script running now.
type RunningScript struct {
	Name     string
	Command  []string
	Duration time.Duration
}

// EngineStats counts an engine's libraries and functions.
type EngineStats struct {
	Libraries, Functions int64
}

// FunctionStats describes the running function and the loaded libraries,
// on the node the command reaches.
//
//zipline:twins FunctionStats
func functionStatsCmd() command[FunctionStats] { return define(decFunctionStats, specFUNCTION_STATS) }

var decFunctionStats = newDecoder(tsMap, func(v resp.Value) (FunctionStats, error) {
	m := fieldMap(v)
	st := FunctionStats{Engines: map[string]EngineStats{}}
	if r := m["running_script"]; !r.IsNull() && len(r.Elems()) > 0 {
		rm := fieldMap(r)
		cmd, _ := Value{rm["command"]}.AsStrings()
		st.Running = &RunningScript{Name: string(rm["name"].Bytes()), Command: cmd,
			Duration: time.Duration(rm["duration_ms"].Int()) * time.Millisecond}
	}
	e := m["engines"].Elems()
	for i := 0; i+1 < len(e); i += 2 {
		em := fieldMap(e[i+1])
		st.Engines[string(e[i].Bytes())] = EngineStats{Libraries: em["libraries_count"].Int(),
			Functions: em["functions_count"].Int()}
	}
	return st, nil
})
