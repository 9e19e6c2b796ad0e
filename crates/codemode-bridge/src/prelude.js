// codemode guest prelude (bridge protocol 1).
//
// Evaluated once, as a classic script, into the base snapshot, before any user code exists. It
// captures the sandbox's three private imports and every intrinsic it needs, deletes the imports from
// globalThis (handing its cell-value encoder to the sandbox first), and leaves private globals:
//   __codemode_boot(json, contents?) - called once per run by the boot script; defines the guest API, then
//                             deletes itself. Without `namespaces` in the JSON it leaves
//                             __codemode_namespaces(json) instead: the API is then baked into a
//                             base image once, and each run adds its namespaces (and deletes the hook)
// Everything that crosses to the host is restricted JSON text built by `encode` below; nothing here
// calls a method that user code could have replaced after load (no `.push`, `.then`, `JSON.*`, ...).
(function (global) {
  "use strict";

  const PROTOCOL = 1;
  const MAX_DEPTH = 64;
  const MAX_NODES = 1000000;
  const MAX_API_PATH_CHARS = 256;

  const hostCall = global.__codemode_host_call;
  // A host call whose request is a prefix, a plain-data value's native JSON text and a suffix.
  const hostCallWith = global.__codemode_host_call_with;
  const emitOutput = global.__codemode_output;
  const setResultEncoder = global.__codemode_set_result_encoder;
  // The sandbox's native encoder for plain data (see `encode`).
  const plainEncode = global.__codemode_encode;
  if (
    typeof hostCall !== "function" ||
    typeof hostCallWith !== "function" ||
    typeof emitOutput !== "function" ||
    typeof setResultEncoder !== "function" ||
    typeof plainEncode !== "function"
  ) {
    throw new Error("codemode prelude: the sandbox bridge imports are missing");
  }

  // ---- intrinsics, captured before any user code can replace them ----
  const apply = Reflect.apply;
  // `uncurry(f)(self, ...args)` calls `f` with `self` without an args array; the bound function keeps
  // the intrinsic `call`, so a later overwrite of Function.prototype.call does not reach it.
  const functionCall = Function.prototype.call;
  const functionBind = Function.prototype.bind;
  function uncurry(fn) {
    return apply(functionBind, functionCall, [fn]);
  }
  const defineProperty = Object.defineProperty;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const objectKeys = Object.keys;
  const objectCreate = Object.create;
  const objectFreeze = Object.freeze;
  const setPrototypeOf = Object.setPrototypeOf;
  const objectToString = uncurry(Object.prototype.toString);
  const isArray = Array.isArray;
  const getPrototypeOf = Object.getPrototypeOf;
  const objectPrototype = Object.prototype;
  const arrayPrototype = Array.prototype;
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;
  const charCodeAt = String.prototype.charCodeAt;
  const stringSlice = String.prototype.slice;
  const stringIndexOf = String.prototype.indexOf;
  const toWellFormed =
    typeof String.prototype.toWellFormed === "function" ? uncurry(String.prototype.toWellFormed) : undefined;
  const fromCharCode = String.fromCharCode;
  const numberIsFinite = Number.isFinite;
  const numberValueOf = Number.prototype.valueOf;
  const stringValueOf = String.prototype.valueOf;
  const booleanValueOf = Boolean.prototype.valueOf;
  const bigintToString = typeof BigInt === "function" ? BigInt.prototype.toString : undefined;
  const bigintValueOf = typeof BigInt === "function" ? BigInt.prototype.valueOf : undefined;
  const dateGetTime = Date.prototype.getTime;
  const dateToISOString = Date.prototype.toISOString;
  const ProxyCtor = Proxy;
  const reflectGet = Reflect.get;
  const reflectHas = Reflect.has;
  const arrayBufferIsView = ArrayBuffer.isView;
  const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const sharedByteLength =
    typeof SharedArrayBuffer === "function"
      ? getOwnPropertyDescriptor(SharedArrayBuffer.prototype, "byteLength").get
      : undefined;

  delete global.__codemode_host_call;
  delete global.__codemode_host_call_with;
  delete global.__codemode_output;
  delete global.__codemode_set_result_encoder;
  delete global.__codemode_encode;

  // ---- stack-trace hook: no frame's function or receiver is reachable ----
  // The engine passes CallSite objects to a guest's `Error.prepareStackTrace` (for any error,
  // `Error.captureStackTrace` included). Their `getFunction`/`getThis` would hand out the functions
  // on the stack (this prelude's among them, when a getter, trap or coercion the prelude triggers
  // creates an error) and their receivers. Both are replaced, for every frame, by functions that
  // return undefined, and the CallSite prototype is frozen; names, files and positions stay. If the
  // engine's CallSites cannot be sealed, the hook is disabled instead; if neither holds, the
  // prelude refuses to load (the sandbox is then unavailable: fail closed).
  function undefinedFrameMember() {
    return undefined;
  }
  function captureCallSites() {
    const saved = getOwnPropertyDescriptor(ErrorCtor, "prepareStackTrace");
    const previous = ErrorCtor.prepareStackTrace;
    let sites;
    try {
      ErrorCtor.prepareStackTrace = function (_error, callSites) {
        return callSites;
      };
      sites = new ErrorCtor("probe").stack;
    } catch (_) {
      sites = undefined; // the hook cannot be set (disabled below)
    } finally {
      // An accessor keeps the hook in engine state: put the previous value back through it.
      if (saved === undefined) delete ErrorCtor.prepareStackTrace;
      else if (saved.set !== undefined) ErrorCtor.prepareStackTrace = previous;
      else defineProperty(ErrorCtor, "prepareStackTrace", saved);
    }
    return isArray(sites) && sites.length > 0 ? sites : undefined;
  }
  function revealsFrames(sites) {
    for (let i = 0; i < sites.length; i++) {
      const site = sites[i];
      const getFunction = site.getFunction;
      const getThis = site.getThis;
      if (typeof getFunction === "function" && apply(getFunction, site, []) !== undefined) return true;
      if (typeof getThis === "function" && apply(getThis, site, []) !== undefined) return true;
    }
    return false;
  }
  (function sealCallSites() {
    const sites = captureCallSites();
    if (sites === undefined) return; // no CallSite objects in this engine: nothing to seal
    const proto = getPrototypeOf(sites[0]);
    if (proto !== null && proto !== objectPrototype) {
      const names = ["getFunction", "getThis"];
      for (let i = 0; i < names.length; i++) {
        const d = getOwnPropertyDescriptor(proto, names[i]);
        if (d === undefined || d.configurable) {
          defineProperty(proto, names[i], {
            __proto__: null,
            value: undefinedFrameMember,
            writable: false,
            enumerable: false,
            configurable: false,
          });
        }
      }
      objectFreeze(proto);
    }
    const again = captureCallSites();
    if (again === undefined || !revealsFrames(again)) return;
    // Sealing did not hold (per-object members): take the hook away for good.
    defineProperty(ErrorCtor, "prepareStackTrace", {
      __proto__: null,
      value: undefined,
      writable: false,
      enumerable: false,
      configurable: false,
    });
    const last = captureCallSites();
    if (last !== undefined && revealsFrames(last)) {
      throw new ErrorCtor("codemode prelude: stack frames would expose functions to guest code");
    }
  })();

  // ---- small helpers that never touch replaceable prototypes ----
  function put(target, key, value) {
    defineProperty(target, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  }
  function lock(target, key, value) {
    defineProperty(target, key, { __proto__: null, value, writable: false, enumerable: true, configurable: false });
  }
  function defineGlobal(name, value) {
    defineProperty(global, name, { __proto__: null, value, writable: false, enumerable: false, configurable: false });
  }
  // Containers built for the bridge have no prototype, so no inherited toJSON/setter can interfere.
  function bareArray() {
    const a = [];
    setPrototypeOf(a, null);
    return a;
  }
  function slice(s, start, end) {
    return apply(stringSlice, s, [start, end]);
  }
  function code(s, i) {
    return apply(charCodeAt, s, [i]);
  }
  function typeError(message) {
    return new TypeErrorCtor(message);
  }
  function plainError(message, errorCode) {
    const e = new ErrorCtor(message);
    if (errorCode !== undefined) put(e, "code", errorCode);
    return e;
  }
  function rejected(error) {
    return new PromiseCtor(function (_resolve, reject) {
      reject(error);
    });
  }
  function resolved(value) {
    return new PromiseCtor(function (resolve) {
      resolve(value);
    });
  }
  // A short description of something thrown, without calling user methods (except getters of
  // `message` on error objects, which are ordinary guest code).
  function describeThrown(e) {
    if (typeof e === "string") return e;
    if (e !== null && typeof e === "object") {
      try {
        const m = e.message;
        if (typeof m === "string") return m;
      } catch (_) {
        // fall through
      }
      return "an exception";
    }
    if (typeof e === "symbol" || typeof e === "function") return "an exception";
    return StringCtor(e);
  }
  function shortKey(key) {
    return key.length > 40 ? slice(key, 0, 40) + "…" : key;
  }

  // Replaces lone surrogates with U+FFFD so that the host's strict UTF-8 JSON decoder accepts the text.
  function wellFormed(s) {
    if (toWellFormed !== undefined) return toWellFormed(s);
    let out = "";
    let start = 0;
    const n = s.length;
    for (let i = 0; i < n; i++) {
      const c = code(s, i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = code(s, i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          i++;
          continue;
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        out += slice(s, start, i) + fromCharCode(0xfffd);
        start = i + 1;
      }
    }
    return start === 0 ? s : out + slice(s, start, n);
  }

  // ---- the restricted JSON adapter ----
  //
  // Encodes a guest value directly as restricted JSON text:
  // - strings are made well-formed; finite numbers stay; NaN/±Infinity become null; BigInt becomes
  //   its decimal string; booleans and null stay;
  // - undefined, functions and symbols are dropped from objects and become null in arrays (at the top
  //   level the caller decides);
  // - Date becomes its ISO string (null when invalid); boxed primitives are unboxed; Error objects
  //   become { name, message };
  // - other objects: own enumerable string keys, in order (getters run; a getter that throws makes the
  //   whole conversion fail with a TypeError naming the key); toJSON is never looked up or called;
  // - ArrayBuffer, SharedArrayBuffer, typed arrays and DataView throw a TypeError (binary is not
  //   supported);
  // - a cycle, nesting deeper than 64 levels or more than 1,000,000 values throws a TypeError.
  // Shared (non-cyclic) references are encoded at each place they appear.
  //
  // The text is assembled by string concatenation (no arrays: the engine's own JSON.stringify keeps
  // an internal array with ordinary [[Set]] semantics, so a setter that guest code put on
  // Array.prototype would run inside it; here nothing can). JSON.stringify is used on strings only.

  // The JSON text of `value`, or undefined when it has none (undefined, a function, a symbol).
  // Plain data (strings, numbers, booleans, null, arrays and plain objects of such, with data
  // properties only, at most 64 KiB of text) is encoded natively by the sandbox in one call; it
  // runs no guest code and gives up (undefined) on anything else, which then takes the walk below:
  // the walk owns every rule and every error.
  // One state object serves every encode; a re-entrant encode (a getter that calls a tool while
  // its object is being encoded) gets its own.
  const sharedState = { __proto__: null, ancestors: null, root: null, nodes: 0, what: "", busy: false };
  function encode(value, what) {
    const plain = plainEncode(value, objectPrototype);
    if (plain !== undefined) return plain;
    return walkEncode(value, what);
  }

  // `encode` for a value the native fast path gave up on.
  function walkEncode(value, what) {
    if (sharedState.busy) {
      return walk(value, { __proto__: null, ancestors: null, root: null, nodes: 0, what, busy: true }, 0);
    }
    const state = sharedState;
    state.busy = true;
    state.nodes = 0;
    state.what = what;
    try {
      return walk(value, state, 0);
    } finally {
      state.busy = false;
      state.root = null;
      state.ancestors = null;
    }
  }

  function tagOf(v) {
    try {
      return objectToString(v);
    } catch (_) {
      return "";
    }
  }

  function tryCall(fn, v) {
    try {
      return { __proto__: null, ok: true, value: apply(fn, v, []) };
    } catch (_) {
      return { __proto__: null, ok: false, value: undefined };
    }
  }

  function readProperty(v, key, state) {
    try {
      return v[key];
    } catch (e) {
      throw typeError(state.what + ': reading property "' + shortKey(key) + '" threw: ' + describeThrown(e));
    }
  }

  function quote(s) {
    return jsonStringify(wellFormed(s));
  }

  // Quoted object keys (and tool ids), reused across calls (keys repeat: "query", "id", ...). Prototype-less, so
  // user code cannot reach or poison it; bounded so hostile key floods do not grow it.
  const quotedKeys = objectCreate(null);
  let quotedKeyCount = 0;
  function quoteKey(key) {
    const cached = quotedKeys[key];
    if (cached !== undefined) return cached;
    const q = quote(key);
    if (quotedKeyCount < 4096 && key.length <= 64) {
      quotedKeys[key] = q;
      quotedKeyCount++;
    }
    return q;
  }

  // The JSON text of a property value: primitives inline (the common case), the rest by `walk`.
  function member(x, state, depth) {
    switch (typeof x) {
      case "string":
        return quote(x);
      case "number":
        // Finite numbers: ToString is exactly JSON's number form. `x - x` is NaN for NaN/±Infinity.
        return x - x === 0 ? "" + x : "null";
      case "boolean":
        return x ? "true" : "false";
    }
    return walk(x, state, depth);
  }

  // The JSON text of `v`, or undefined for a value that has no JSON form.
  function walk(v, state, depth) {
    switch (typeof v) {
      case "string":
        return quote(v);
      case "number":
        // For finite numbers ToString is exactly JSON's number form.
        return numberIsFinite(v) ? "" + v : "null";
      case "boolean":
        return v ? "true" : "false";
      case "bigint":
        return '"' + apply(bigintToString, v, []) + '"';
      case "undefined":
      case "function":
      case "symbol":
        return undefined;
    }
    if (v === null) return "null";
    if (++state.nodes > MAX_NODES) {
      throw typeError(state.what + ": value has more than 1000000 parts; the Code Mode bridge refuses it");
    }
    if (arrayBufferIsView(v)) throw binaryError(state);
    // Fast path: arrays and plain objects need no brand checks.
    const proto = isArray(v) ? arrayPrototype : getPrototypeOf(v);
    if (proto !== arrayPrototype && proto !== objectPrototype && proto !== null) {
      const tagged = special(v, state, depth);
      if (tagged !== NOT_SPECIAL) return tagged;
    }
    return container(v, state, depth);
  }

  const NOT_SPECIAL = objectFreeze(objectCreate(null));

  // Dates, boxed primitives, errors and binary values; NOT_SPECIAL for anything else.
  function special(v, state, depth) {
    switch (tagOf(v)) {
      case "[object Object]":
      case "[object Array]":
        break;
      case "[object ArrayBuffer]":
        if (tryCall(arrayBufferByteLength, v).ok) throw binaryError(state);
        break;
      case "[object SharedArrayBuffer]":
        if (sharedByteLength !== undefined && tryCall(sharedByteLength, v).ok) throw binaryError(state);
        break;
      case "[object Date]": {
        const t = tryCall(dateGetTime, v);
        if (t.ok) return t.value === t.value ? quote(apply(dateToISOString, v, [])) : "null";
        break;
      }
      case "[object Number]": {
        const n = tryCall(numberValueOf, v);
        if (n.ok) return walk(n.value, state, depth);
        break;
      }
      case "[object String]": {
        const s = tryCall(stringValueOf, v);
        if (s.ok) return walk(s.value, state, depth);
        break;
      }
      case "[object Boolean]": {
        const b = tryCall(booleanValueOf, v);
        if (b.ok) return walk(b.value, state, depth);
        break;
      }
      case "[object BigInt]": {
        const b = bigintValueOf === undefined ? undefined : tryCall(bigintValueOf, v);
        if (b !== undefined && b.ok) return walk(b.value, state, depth);
        break;
      }
      case "[object Error]": {
        const name = readProperty(v, "name", state);
        const message = readProperty(v, "message", state);
        return (
          '{"name":' +
          quote(typeof name === "string" ? name : "Error") +
          ',"message":' +
          quote(typeof message === "string" ? message : "") +
          "}"
        );
      }
    }
    return NOT_SPECIAL;
  }

  function container(v, state, depth) {
    // Ancestors: the root container, then a linked list of prototype-less cells (at most 63 long).
    let circular = depth > 0 && state.root === v;
    for (let a = state.ancestors; a !== null && !circular; a = a.up) circular = a.value === v;
    if (circular) {
      throw typeError(state.what + ": value is circular; the Code Mode bridge accepts JSON-compatible values only");
    }
    if (depth >= MAX_DEPTH) {
      throw typeError(state.what + ": value nests deeper than 64 levels; the Code Mode bridge accepts at most 64");
    }
    const parent = state.ancestors;
    if (depth === 0) state.root = v;
    else state.ancestors = { __proto__: null, value: v, up: parent };
    let out;
    if (isArray(v)) {
      out = "[";
      const n = readProperty(v, "length", state);
      for (let i = 0; i < n; i++) {
        let x;
        try {
          x = v[i];
        } catch (e) {
          throw typeError(state.what + ': reading property "' + i + '" threw: ' + describeThrown(e));
        }
        const item = member(x, state, depth + 1);
        out += (i > 0 ? "," : "") + (item === undefined ? "null" : item);
      }
      out += "]";
    } else {
      out = "{";
      const keys = objectKeys(v);
      const n = keys.length;
      for (let i = 0; i < n; i++) {
        const key = keys[i];
        let x;
        try {
          x = v[key];
        } catch (e) {
          throw typeError(state.what + ': reading property "' + shortKey(key) + '" threw: ' + describeThrown(e));
        }
        const item = member(x, state, depth + 1);
        if (item !== undefined) out += (out.length > 1 ? "," : "") + quoteKey(key) + ":" + item;
      }
      out += "}";
    }
    state.ancestors = parent;
    return out;
  }

  function binaryError(state) {
    return typeError(
      state.what + ": binary values (ArrayBuffer, typed arrays, DataView) cannot cross the Code Mode bridge",
    );
  }

  // A top-level argument: undefined stays undefined (omitted); a function or symbol is refused.
  function encodeArgument(value, what) {
    if (value === undefined) return undefined;
    const text = encode(value, what);
    if (text === undefined) throw argumentError(value, what);
    return text;
  }

  // `encodeArgument` for a defined value the native fast path gave up on.
  function walkArgument(value, what) {
    const text = walkEncode(value, what);
    if (text === undefined) throw argumentError(value, what);
    return text;
  }

  function argumentError(value, what) {
    return typeError(what + ": input must be JSON-compatible, not a " + typeof value);
  }

  // ---- host calls ----
  // `build()` returns the request members as `,"key":<json>` text (see `field`); anything it (or a
  // policy refusal) throws rejects the returned promise.
  function field(key, json) {
    return ',"' + key + '":' + json;
  }

  // Returns the sandbox's own (intrinsic) promise for the call, or a rejected one.
  function request(op, build) {
    let members;
    try {
      members = build();
    } catch (e) {
      return rejected(e);
    }
    return send(op, members);
  }

  function send(op, members) {
    return post('{"v":' + PROTOCOL + ',"op":"' + op + '"' + members + "}");
  }

  // Starts the host call of a whole request text.
  function post(payload) {
    try {
      return hostCall(payload);
    } catch (e) {
      return rejected(e);
    }
  }

  // The start of a tool call's request, up to its id.
  const CALL_HEAD = '{"v":' + PROTOCOL + ',"op":"call","id":';
  const CALL_VALUE_HEAD = '{"v":' + PROTOCOL + ',"op":"callValue","id":';
  const INPUT_KEY = ',"input":';

  // A tool call's request up to its input, by id, for `tools.call` / `tools.callValue` (ids
  // repeat across calls). Prototype-less and bounded, like the quoted-key cache.
  const callPrefixes = objectCreate(null);
  const callValuePrefixes = objectCreate(null);
  let prefixCount = 0;
  function requestPrefix(head, id) {
    const cache = head === CALL_HEAD ? callPrefixes : callValuePrefixes;
    const cached = cache[id];
    if (cached !== undefined) return cached;
    const prefix = head + quoteKey(id) + INPUT_KEY;
    if (prefixCount < 4096 && id.length <= 256) {
      cache[id] = prefix;
      prefixCount++;
    }
    return prefix;
  }

  function requireString(value, what) {
    if (typeof value !== "string") throw typeError(what + " must be a string");
    return quote(value);
  }

  // The hot path (every tool call): no closure, and the error text (`what` + `name`) built only
  // when the input or the id is refused. A string id with plain-data input (the common case) goes
  // to the host in one native step, the request built there; anything else is encoded here. `head`
  // is CALL_HEAD or CALL_VALUE_HEAD; `idText` the quoted id when the caller has it, else undefined;
  // `prefix` the request up to its input (head, id and the input's key) when the caller has it.
  function callTool(head, id, idText, input, what, name, prefix) {
    let plain = true;
    if (input !== undefined && typeof id === "string") {
      try {
        // A caller with the quoted id passes its prefix too.
        if (prefix === undefined) prefix = requestPrefix(head, id);
        const started = hostCallWith(prefix, input, "}", objectPrototype);
        if (started !== undefined) return started;
        plain = false;
      } catch (e) {
        return rejected(e);
      }
    }
    let payload;
    try {
      let text;
      if (input !== undefined) {
        text = plain ? plainEncode(input, objectPrototype) : undefined;
        if (text === undefined) text = walkArgument(input, what + name);
      }
      if (idText === undefined) idText = typeof id === "string" ? quoteKey(id) : requireString(id, what + name + ": id");
      payload = text === undefined ? head + idText + "}" : head + idText + ',"input":' + text + "}";
    } catch (e) {
      return rejected(e);
    }
    return post(payload);
  }

  function objectInput(input, what) {
    if (input === undefined || input === null) return "{}";
    const text = encodeArgument(input, what);
    if (code(text, 0) !== 123 /* { */) throw typeError(what + ": input must be an object");
    return text;
  }

  // ---- output ----
  function text(value) {
    let s;
    const t = typeof value;
    if (t === "string") s = value;
    else if (t === "undefined") s = "undefined";
    else if (t === "function") s = "[function]";
    else if (t === "symbol" || t !== "object" || value === null) s = StringCtor(value);
    else {
      const encoded = encode(value, "text");
      // A value that encodes to a JSON string (a Date, a boxed string) is shown without quotes.
      s = encoded === undefined ? "undefined" : code(encoded, 0) === 34 /* " */ ? jsonParse(encoded) : encoded;
    }
    emitOutput("text", wellFormed(s));
  }

  function json(value) {
    let encoded = encode(value, "json");
    if (encoded === undefined) {
      const t = typeof value;
      encoded = t === "undefined" ? "null" : t === "function" ? '"[function]"' : quote(StringCtor(value));
    }
    emitOutput("json", encoded);
  }

  // ---- console ----
  //
  // console.log / info / warn / error / debug(...args): each call appends one `text` output item,
  // exactly like text() (same maxOutputBytes accounting; past the limit the call throws). The
  // arguments are formatted like Node's util.format for the common cases:
  // - a first string argument may hold %s (string), %d (number), %i (parseInt), %f (parseFloat),
  //   %j (JSON), %o / %O (like any other value), %c (consumed, prints nothing) and %% (a percent
  //   sign, when there are further arguments); a specifier without an argument stays as written;
  // - the remaining arguments follow, separated by single spaces;
  // - strings print as they are, numbers and booleans as usual (-0 as "-0"), BigInt as "5n",
  //   undefined and symbols as their names, functions as "[Function: name]", errors as
  //   "Name: message", other objects as compact JSON (the text() encoding; a value the encoder
  //   refuses, such as a cycle, prints as "[reason]" instead of throwing).
  // Self-contained: it uses only intrinsics captured above; no guest method is called (getters run
  // while an object is encoded, as in text()); numeric specifiers on objects give NaN rather than
  // calling valueOf.
  const NumberCtor = Number;
  const parseIntFn = parseInt;
  const parseFloatFn = parseFloat;

  function consoleNumber(n) {
    return n === 0 && 1 / n < 0 ? "-0" : StringCtor(n);
  }

  function consoleFunction(fn) {
    try {
      const d = getOwnPropertyDescriptor(fn, "name");
      const name = d !== undefined && typeof d.value === "string" ? d.value : "";
      return name.length > 0 ? "[Function: " + name + "]" : "[Function (anonymous)]";
    } catch (_) {
      return "[Function]";
    }
  }

  function consoleError(e) {
    try {
      const name = e.name;
      const message = e.message;
      const n = typeof name === "string" && name.length > 0 ? name : "Error";
      return typeof message === "string" && message.length > 0 ? n + ": " + message : n;
    } catch (_) {
      return "Error";
    }
  }

  function consoleValue(v, what) {
    switch (typeof v) {
      case "string":
        return v;
      case "number":
        return consoleNumber(v);
      case "bigint":
        return apply(bigintToString, v, []) + "n";
      case "boolean":
        return v ? "true" : "false";
      case "undefined":
        return "undefined";
      case "symbol":
        return StringCtor(v);
      case "function":
        return consoleFunction(v);
    }
    if (v === null) return "null";
    if (tagOf(v) === "[object Error]") return consoleError(v);
    let encoded;
    try {
      encoded = encode(v, what);
    } catch (e) {
      return "[" + describeThrown(e) + "]";
    }
    if (encoded === undefined) return "undefined";
    // A value that encodes to a JSON string (a Date, a boxed string) is shown without quotes.
    return code(encoded, 0) === 34 /* " */ ? jsonParse(encoded) : encoded;
  }

  // The number a numeric specifier prints: primitives convert as in Node (%d and %i keep a BigInt
  // as "5n"); objects give NaN.
  function consoleNumeric(v, kind) {
    const t = typeof v;
    if (t === "bigint" && kind !== 102 /* f */) return apply(bigintToString, v, []) + "n";
    if (t === "symbol" || (t === "object" && v !== null) || t === "function") return "NaN";
    if (kind === 100 /* d */) return consoleNumber(NumberCtor(v));
    if (kind === 105 /* i */) return consoleNumber(parseIntFn(StringCtor(v)));
    return consoleNumber(parseFloatFn(StringCtor(v)));
  }

  function consoleJson(v, what) {
    let encoded;
    try {
      encoded = encode(v, what);
    } catch (e) {
      return "[" + describeThrown(e) + "]";
    }
    return encoded === undefined ? "undefined" : encoded;
  }

  function consoleFormat(args, what) {
    const n = args.length;
    if (n === 0) return "";
    const first = args[0];
    let out = "";
    let next = 0;
    if (typeof first === "string") {
      if (n === 1) return first;
      next = 1;
      let start = 0;
      const len = first.length;
      for (let i = 0; i < len - 1; i++) {
        if (code(first, i) !== 37 /* % */) continue;
        const c = code(first, i + 1);
        let piece;
        if (c === 37) {
          piece = "%";
        } else if (next < n) {
          const a = args[next];
          switch (c) {
            case 115: // s
            case 111: // o
            case 79: // O
              piece = consoleValue(a, what);
              break;
            case 100: // d
            case 105: // i
            case 102: // f
              piece = consoleNumeric(a, c);
              break;
            case 106: // j
              piece = consoleJson(a, what);
              break;
            case 99: // c
              piece = "";
              break;
          }
          if (piece !== undefined) next++;
        }
        if (piece !== undefined) {
          out += slice(first, start, i) + piece;
          start = i + 2;
          i++;
        }
      }
      out += slice(first, start, len);
    }
    for (; next < n; next++) {
      out += (next > 0 ? " " : "") + consoleValue(args[next], what);
    }
    return out;
  }

  function makeConsole() {
    const c = {};
    const methods = ["log", "info", "warn", "error", "debug"];
    for (let m = 0; m < methods.length; m++) {
      const what = "console." + methods[m];
      lock(c, methods[m], function () {
        emitOutput("text", wellFormed(consoleFormat(arguments, what)));
      });
    }
    return objectFreeze(c);
  }
  const guestConsole = makeConsole();

  function yieldControl(reason) {
    const p = request("yield", function () {
      return reason === undefined ? "" : field("reason", requireString(reason, "yield_control: reason"));
    });
    return new PromiseCtor(function (resolve, reject) {
      apply(promiseThen, p, [
        function () {
          resolve(undefined);
        },
        reject,
      ]);
    });
  }

  // The cell's value as restricted JSON text (a string), or undefined; see `decode_cell_value`.
  // With a bound (the boot context's `maxResultChars`: the run's maxOutputBytes), a text longer than
  // that many UTF-16 code units (so more than that many UTF-8 bytes) stays here: only its length (a
  // number) is returned, and the host fails the run with output_limit_exceeded.
  let resultMaxChars;
  function cellResult(value) {
    const text = encode(value, "the cell's return value");
    if (typeof resultMaxChars === "number" && text !== undefined && text.length > resultMaxChars) return text.length;
    return text;
  }

  // ---- API virtual files (same rules as api_files.rs) ----
  function normalizeApiPath(path) {
    const n = path.length;
    let chars = 0;
    let nul = false;
    let backslash = false;
    for (let i = 0; i < n; i++) {
      const c = code(path, i);
      if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
        const p = code(path, i - 1);
        if (p >= 0xd800 && p <= 0xdbff) continue;
      }
      chars++;
      if (c === 0) nul = true;
      if (c === 92) backslash = true;
    }
    if (chars > MAX_API_PATH_CHARS) throw plainError("path is longer than 256 characters");
    if (nul) throw plainError("path contains NUL");
    if (backslash) throw plainError("path contains a backslash; use /");
    if (n > 0 && code(path, 0) === 47) throw plainError('path must be relative, like "mcp/index.d.ts"');
    let p = path;
    if (n > 0 && code(p, n - 1) === 47) p = slice(p, 0, n - 1);
    if (p.length === 0) return p;
    let start = 0;
    for (let i = 0; i <= p.length; i++) {
      if (i === p.length || code(p, i) === 47) {
        const segment = slice(p, start, i);
        if (segment.length === 0) throw plainError("path has an empty segment");
        if (segment === "." || segment === "..") throw plainError("path has a . or .. segment");
        start = i + 1;
      }
    }
    return p;
  }

  function makeApi(files) {
    function guarded(what, fn) {
      return function (arg) {
        try {
          return resolved(fn(arg));
        } catch (e) {
          return rejected(plainError(what + ": " + describeThrown(e)));
        }
      };
    }
    const api = {};
    lock(
      api,
      "list",
      guarded("API.list", function (prefix) {
        if (prefix !== undefined && typeof prefix !== "string") throw typeError("prefix must be a string");
        const p = normalizeApiPath(prefix === undefined ? "" : prefix);
        const out = [];
        for (let i = 0; i < files.length; i++) {
          const f = files[i];
          const matches =
            p.length === 0 || f.path === p || (slice(f.path, 0, p.length) === p && code(f.path, p.length) === 47);
          if (matches) {
            const entry = {};
            put(entry, "path", f.path);
            put(entry, "bytes", f.bytes);
            put(out, out.length, entry);
          }
        }
        return out;
      }),
    );
    lock(
      api,
      "read",
      guarded("API.read", function (path) {
        if (typeof path !== "string") throw typeError("path must be a string");
        const p = normalizeApiPath(path);
        for (let i = 0; i < files.length; i++) {
          if (files[i].path === p) return files[i].content;
        }
        throw plainError("unknown file; API.list() shows the available files");
      }),
    );
    // The gateway's search over the run's MCP tools (ranked by the host; see `apiSearch`).
    lock(api, "search", function search(query, options) {
      return request("apiSearch", function () {
        return searchMembers(query, options, "API.search", true);
      });
    });
    return objectFreeze(api);
  }

  // `query` and `options.limit` of tools.search / API.search (and API.search's `options.server`)
  // as request members; the host checks their values.
  function searchMembers(query, options, what, withServer) {
    let m = field("query", requireString(query, what + ": query"));
    if (options !== undefined && options !== null) {
      if (typeof options !== "object") throw typeError(what + ": options must be an object like { limit: 5 }");
      const limit = readProperty(options, "limit", { __proto__: null, what: what });
      const text = encodeArgument(limit, what + ": options.limit");
      if (text !== undefined) m += field("limit", text);
      if (withServer) {
        const server = readProperty(options, "server", { __proto__: null, what: what });
        const names = encodeArgument(server, what + ": options.server");
        if (names !== undefined) m += field("server", names);
      }
    }
    return m;
  }

  // ---- per-run API ----
  function makeTools(convenience) {
    const tools = {};
    lock(tools, "search", function search(query, options) {
      return request("search", function () {
        return searchMembers(query, options, "tools.search");
      });
    });
    lock(tools, "describe", function describe(id) {
      return request("describe", function () {
        return field("id", requireString(id, "tools.describe: id"));
      });
    });
    lock(tools, "callValue", function callValue(id, input) {
      return callTool(CALL_VALUE_HEAD, id, undefined, input, "tools.callValue", "");
    });
    lock(tools, "call", function call(id, input) {
      return callTool(CALL_HEAD, id, undefined, input, "tools.call", "");
    });
    for (let i = 0; i < convenience.length; i++) {
      const name = convenience[i][0];
      const id = convenience[i][1];
      let idText; // quoted on the first call (a run may define many and call few)
      let prefix;
      lock(tools, name, function (input) {
        if (idText === undefined) {
          idText = quote(id);
          prefix = CALL_VALUE_HEAD + idText + INPUT_KEY;
        }
        return callTool(CALL_VALUE_HEAD, id, idText, input, "tools.", name, prefix);
      });
    }
    return objectFreeze(tools);
  }

  // ---- MCP namespace: identifiers, exact-name aliases, and errors that name what exists ----

  // Lowercase ASCII letters and digits of (a bounded prefix of) `s`: `git_log`, `gitLog` and
  // `Git-Log` all become `gitlog`.
  function squash(s) {
    let out = "";
    const n = s.length < 128 ? s.length : 128;
    for (let i = 0; i < n; i++) {
      const c = code(s, i);
      if (c >= 65 && c <= 90) out += fromCharCode(c + 32);
      else if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) out += fromCharCode(c);
    }
    return out;
  }

  // Edit distance of `a` and `b` (insertions, deletions, substitutions and swaps of neighbours), or
  // `max + 1` when it is larger than `max`.
  function distance(a, b, max) {
    const la = a.length;
    const lb = b.length;
    if (la - lb > max || lb - la > max) return max + 1;
    // Three prototype-less rows, rotated: assignments cannot reach a setter guest code put on
    // Array.prototype.
    let before = bareArray();
    let previous = bareArray();
    let row = bareArray();
    for (let j = 0; j <= lb; j++) previous[j] = j;
    for (let i = 1; i <= la; i++) {
      row[0] = i;
      let best = i;
      const ca = code(a, i - 1);
      for (let j = 1; j <= lb; j++) {
        const cb = code(b, j - 1);
        let d = previous[j - 1] + (ca === cb ? 0 : 1);
        if (previous[j] + 1 < d) d = previous[j] + 1;
        if (row[j - 1] + 1 < d) d = row[j - 1] + 1;
        if (i > 1 && j > 1 && ca === code(b, j - 2) && code(a, i - 2) === cb && before[j - 2] + 1 < d) {
          d = before[j - 2] + 1;
        }
        row[j] = d;
        if (d < best) best = d;
      }
      if (best > max) return max + 1;
      const spare = before;
      before = previous;
      previous = row;
      row = spare;
    }
    return previous[lb];
  }

  // `[identifier, exact name]` pairs with their squashed forms, computed on the first miss.
  function squashedForms(candidates) {
    if (candidates.forms === undefined) {
      const forms = bareArray();
      for (let i = 0; i < candidates.list.length; i++) {
        forms[i] = [squash(candidates.list[i][0]), squash(candidates.list[i][1])];
      }
      candidates.forms = forms;
    }
    return candidates.forms;
  }

  // The identifier in `candidates` closest to `key`, or undefined: the same letters and digits
  // first, then one containing the other, then the smallest edit distance (at most a quarter of
  // the length, at least 1).
  function closest(key, candidates) {
    const k = squash(key);
    if (k.length === 0) return undefined;
    const list = candidates.list;
    const forms = squashedForms(candidates);
    for (let i = 0; i < list.length; i++) {
      if (forms[i][0] === k || forms[i][1] === k) return list[i][0];
    }
    const max = k.length < 8 ? 1 : k.length >> 2;
    let best;
    let bestScore = max + 2;
    for (let i = 0; i < list.length; i++) {
      for (let f = 0; f < 2; f++) {
        const c = forms[i][f];
        let score;
        if (k.length >= 3 && c.length >= 3 && (apply(stringIndexOf, c, [k]) >= 0 || apply(stringIndexOf, k, [c]) >= 0)) {
          score = 0.5;
        } else {
          score = distance(k, c, max);
        }
        if (score < bestScore) {
          bestScore = score;
          best = list[i][0];
        }
      }
    }
    return bestScore <= max ? best : undefined;
  }

  // `a, b, c, … (N more)`: at most 12 identifiers.
  function someNames(candidates) {
    const list = candidates.list;
    let out = "";
    const n = list.length < 12 ? list.length : 12;
    for (let i = 0; i < n; i++) out += (i > 0 ? ", " : "") + list[i][0];
    if (list.length > n) out += ", … (" + (list.length - n) + " more)";
    return out;
  }

  // Keys read by `await`, JSON tools and feature probes: reading them never throws.
  function quietKey(key) {
    return typeof key !== "string" || key === "then" || key === "toJSON" || key === "resources" || key === "prompts";
  }

  // A frozen namespace object behind a proxy: own members as they are, `aliases[key]` for exact
  // names, undefined for quiet keys, and an error naming the closest member for anything else.
  function guardedNamespace(target, aliases, missing) {
    const handler = {
      __proto__: null,
      get: function (t, key, receiver) {
        if (reflectHas(t, key)) return reflectGet(t, key, receiver);
        if (typeof key === "string") {
          const alias = aliases[key];
          if (alias !== undefined) return alias;
        }
        if (quietKey(key)) return undefined;
        throw missing(key);
      },
      has: function (t, key) {
        return reflectHas(t, key) || (typeof key === "string" && aliases[key] !== undefined);
      },
    };
    return new ProxyCtor(target, handler);
  }

  function makeMcp(servers) {
    const mcp = {};
    const serverAliases = objectCreate(null);
    const serverCandidates = { __proto__: null, list: bareArray(), forms: undefined };
    const names = objectKeys(servers);
    for (let s = 0; s < names.length; s++) {
      const server = names[s];
      const entry = servers[server];
      const ns = {};
      const tools = entry.tools;
      const toolNames = isArray(entry.toolNames) ? entry.toolNames : bareArray();
      const candidates = { __proto__: null, list: bareArray(), forms: undefined };
      const toolAliases = objectCreate(null);
      for (let t = 0; t < tools.length; t++) {
        const tool = tools[t];
        const what = "MCP." + server + "." + tool;
        let head; // the request up to its input, built on the first call
        const fn = function (input) {
          let payload;
          try {
            if (head === undefined) {
              head = '{"v":' + PROTOCOL + ',"op":"mcp","server":' + quote(server) + ',"tool":' + quote(tool) + INPUT_KEY;
            }
            // A plain object goes to the host in one native step (see `callTool`).
            if (typeof input === "object" && input !== null && !isArray(input)) {
              const started = hostCallWith(head, input, "}", objectPrototype);
              if (started !== undefined) return started;
            }
            payload = head + objectInput(input, what) + "}";
          } catch (e) {
            return rejected(e);
          }
          return post(payload);
        };
        lock(ns, tool, fn);
        const exact = typeof toolNames[t] === "string" ? toolNames[t] : tool;
        put(candidates.list, candidates.list.length, [tool, exact]);
        if (exact !== tool) put(toolAliases, exact, fn);
      }
      lock(ns, "$api", function $api(toolName, options) {
        return request("mcpApi", function () {
          let m = field("server", quote(server));
          if (toolName !== undefined && toolName !== null) {
            m += field("tool", requireString(toolName, "MCP." + server + ".$api: toolName"));
          }
          if (options !== undefined && options !== null) {
            if (typeof options !== "object") throw typeError("MCP." + server + ".$api: options must be an object");
            const schema = readProperty(options, "schema", { __proto__: null, what: "MCP." + server + ".$api" });
            if (schema !== undefined) {
              if (typeof schema !== "boolean") throw typeError("MCP." + server + ".$api: options.schema must be a boolean");
              m += field("schema", schema ? "true" : "false");
            }
          }
          return m;
        });
      });
      if (entry.resources) {
        const resources = {};
        lock(resources, "read", function read(input) {
          return request("resourcesRead", function () {
            return field("server", quote(server)) + field("input", objectInput(input, "MCP." + server + ".resources.read"));
          });
        });
        lock(ns, "resources", objectFreeze(resources));
      }
      if (entry.prompts) {
        const prompts = {};
        lock(prompts, "get", function get(input) {
          return request("promptsGet", function () {
            return field("server", quote(server)) + field("input", objectInput(input, "MCP." + server + ".prompts.get"));
          });
        });
        lock(ns, "prompts", objectFreeze(prompts));
      }
      const guarded = guardedNamespace(objectFreeze(ns), toolAliases, function (key) {
        const near = closest(key, candidates);
        let message = "MCP." + server + " has no " + shortKey(key);
        if (near !== undefined) message += "; did you mean " + near + "?";
        else if (candidates.list.length === 0) message += "; the server has no tools";
        else message += "; its tools: " + someNames(candidates) + ". MCP." + server + ".$api() lists them";
        return typeError(message);
      });
      lock(mcp, server, guarded);
      const exactServer = typeof entry.name === "string" ? entry.name : server;
      put(serverCandidates.list, serverCandidates.list.length, [server, exactServer]);
      if (exactServer !== server) put(serverAliases, exactServer, guarded);
    }
    return guardedNamespace(objectFreeze(mcp), serverAliases, function (key) {
      const near = closest(key, serverCandidates);
      let message = "MCP has no server " + shortKey(key);
      if (near !== undefined) message += "; did you mean " + near + "?";
      if (serverCandidates.list.length === 0) message += "; no MCP server is visible in this run";
      else message += (near !== undefined ? " Servers: " : "; servers: ") + someNames(serverCandidates);
      return typeError(message);
    });
  }

  function makeNamespace(descriptor) {
    const id = descriptor.id;
    const globalName = descriptor.globalName;
    const shared = descriptor.shared;
    const built = bareArray();
    const done = bareArray();
    function callable(path) {
      return function () {
        const args = arguments;
        return request("namespace", function () {
          const what = globalName + " call";
          let list = "[";
          for (let i = 0; i < args.length; i++) {
            const text = encode(args[i], what);
            list += (i > 0 ? "," : "") + (text === undefined ? "null" : text);
          }
          return field("namespace", quote(id)) + field("path", quote(path)) + field("args", list + "]");
        });
      };
    }
    function build(node) {
      const tag = node[0];
      const body = node[1];
      if (tag === "d") return body;
      if (tag === "t") return callable(body);
      if (tag === "r") {
        if (done[body] !== true) {
          put(done, body, true);
          put(built, body, build(shared[body]));
        }
        return built[body];
      }
      if (tag === "a") {
        const a = [];
        for (let i = 0; i < body.length; i++) put(a, i, build(body[i]));
        return objectFreeze(a);
      }
      const o = {};
      for (let i = 0; i < body.length; i++) lock(o, body[i][0], build(body[i][1]));
      return objectFreeze(o);
    }
    return build(descriptor.root);
  }

  function defineNamespaces(list) {
    const namespaces = {};
    const globals = [];
    for (let i = 0; i < list.length; i++) {
      const d = list[i];
      const value = makeNamespace(d);
      lock(namespaces, d.globalName, value);
      put(globals, globals.length, [d.globalName, value]);
    }
    defineGlobal("namespaces", objectFreeze(namespaces));
    for (let i = 0; i < globals.length; i++) defineGlobal(globals[i][0], globals[i][1]);
  }

  // Second stage of a two-stage boot: the run's namespaces, on a VM whose base image already holds
  // the rest of the API.
  function bootNamespaces(namespacesJson) {
    delete global.__codemode_namespaces;
    defineNamespaces(jsonParse(namespacesJson));
  }

  let booted = false;
  // `contents` (a two-stage boot's first stage): the API files' contents, in the order of
  // `ctx.files`, passed as string literals of their own rather than inside the JSON.
  function boot(bootJson, contents) {
    if (booted) throw new ErrorCtor("codemode: the guest API is already booted");
    booted = true;
    delete global.__codemode_boot;
    const ctx = jsonParse(bootJson);
    if (isArray(contents)) {
      for (let i = 0; i < ctx.files.length; i++) put(ctx.files[i], "content", contents[i]);
    }
    if (ctx.protocol !== PROTOCOL) {
      throw new ErrorCtor(
        "code mode bridge protocol mismatch: prelude speaks " + PROTOCOL + ", host speaks " + StringCtor(ctx.protocol),
      );
    }
    if (typeof ctx.maxResultChars === "number") resultMaxChars = ctx.maxResultChars;
    defineGlobal("ALL_TOOLS", ctx.allTools);
    defineGlobal("tools", makeTools(ctx.convenience));
    defineGlobal("MCP", makeMcp(ctx.mcp));
    defineGlobal("API", makeApi(ctx.files));
    defineGlobal("text", text);
    defineGlobal("json", json);
    defineGlobal("console", guestConsole);
    defineGlobal("yield_control", yieldControl);
    if (ctx.namespaces === undefined) {
      // Two-stage boot: this state becomes a base image; each run then calls the hook once.
      defineProperty(global, "__codemode_namespaces", {
        __proto__: null,
        value: bootNamespaces,
        writable: false,
        enumerable: false,
        configurable: true,
      });
    } else {
      defineNamespaces(ctx.namespaces);
    }
  }

  defineProperty(global, "__codemode_boot", {
    __proto__: null,
    value: boot,
    writable: false,
    enumerable: false,
    configurable: true,
  });
  // The sandbox applies it to every cell's resolved value, outside any guest-visible promise.
  setResultEncoder(cellResult);
})(globalThis);
