//! `__codemode_encode`: the fast path of the prelude's restricted JSON adapter for plain data,
//! written against QuickJS's C API. It reads only own data properties and never runs guest code;
//! anything else makes it give up with nothing observable done.
//!
//! Every `unsafe` here calls QuickJS's C API on the live context the call came from, with values
//! that context owns; each reference taken is freed in the same function.

use rquickjs::function::Rest;
use rquickjs::{Ctx, Value, qjs};

/// The fast path of the prelude's restricted JSON adapter, for plain data only. It never runs
/// guest code: it reads only own data properties, so when it gives up ([`Bail`]) nothing has
/// happened and the prelude's encoder (which owns every rule and every error message) starts
/// from scratch. Handled: strings (made well-formed, quoted like `JSON.stringify`), numbers
/// (`ToString`; NaN and infinities as `null`), booleans, null; arrays (class `Array`, any
/// prototype) whose elements `0..length` are all own data properties; objects of the ordinary
/// class whose prototype is `objectPrototype` or null, their own enumerable string keys in
/// `Object.keys` order, all data properties. Members that are undefined, functions or symbols
/// are dropped from objects and `null` in arrays, as in the prelude. Everything else gives up:
/// proxies, getters, holes, other classes (dates, errors, boxed values, binary, ...), BigInt,
/// nesting at 64 levels (so cycles), more than 1,000,000 containers, more than
/// [`FAST_MAX_BYTES`] of text, and a top-level value without a JSON form.
struct Bail;

/// Longest text the fast path builds (its buffer is outside QuickJS's heap limit); longer
/// values take the prelude's encoder, whose strings are on the QuickJS heap.
const FAST_MAX_BYTES: usize = 64 * 1024;
/// The prelude's `MAX_DEPTH` and `MAX_NODES`.
const FAST_MAX_DEPTH: u32 = 64;
const FAST_MAX_NODES: u32 = 1_000_000;

struct Fast {
    ctx: *mut qjs::JSContext,
    out: Vec<u8>,
    nodes: u32,
    object_proto: qjs::JSValue,
    object_class: qjs::JSClassID,
}

impl Fast {
    fn fits(&self) -> Result<(), Bail> {
        if self.out.len() > FAST_MAX_BYTES { Err(Bail) } else { Ok(()) }
    }

    /// Clears an exception the engine raised (only out of memory can): the prelude's encoder
    /// runs into it again and reports it.
    fn fail(&self) -> Bail {
        unsafe { // SAFETY: a live context; the exception's reference is ours to free.
            let e = qjs::JS_GetException(self.ctx);
            qjs::JS_FreeValue(self.ctx, e);
        }
        Bail
    }

    /// `JSON.stringify(toWellFormed(s))` of the string value `v`.
    fn string(&mut self, v: qjs::JSValue) -> Result<(), Bail> {
        let mut len: qjs::size_t = 0;
        // SAFETY: a live context and string value; the bytes stay valid until `JS_FreeCString`.
        let ptr = unsafe { qjs::JS_ToCStringLen2(self.ctx, &mut len, v, false) };
        if ptr.is_null() {
            return Err(self.fail());
        }
        let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len as usize) }; // SAFETY: see above.
        self.quote(bytes);
        unsafe { qjs::JS_FreeCString(self.ctx, ptr) }; // SAFETY: from `JS_ToCStringLen2` above.
        self.fits()
    }

    /// Quotes WTF-8 text: a lone surrogate (`ED A0..BF xx`) becomes U+FFFD; `"`, `\\` and
    /// control characters are escaped exactly as the engine's `JSON.stringify` does.
    fn quote(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let out = &mut self.out;
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let escape: Option<&[u8]> = match b {
                b'"' => Some(&b"\\\""[..]),
                b'\\' => Some(&b"\\\\"[..]),
                b'\n' => Some(&b"\\n"[..]),
                b'\r' => Some(&b"\\r"[..]),
                b'\t' => Some(&b"\\t"[..]),
                0x08 => Some(&b"\\b"[..]),
                0x0c => Some(&b"\\f"[..]),
                0xed if i + 2 < bytes.len() && bytes[i + 1] >= 0xa0 => Some("\u{fffd}".as_bytes()),
                _ => None,
            };
            if let Some(escape) = escape {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(escape);
                i += if b == 0xed { 3 } else { 1 };
                start = i;
            } else if b < 0x20 {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
                i += 1;
                start = i;
            } else {
                i += 1;
            }
        }
        out.extend_from_slice(&bytes[start..]);
        out.push(b'"');
    }

    /// Writes `v`; `Ok(false)` when it has no JSON form (undefined, a function, a symbol).
    fn value(&mut self, v: qjs::JSValue, depth: u32) -> Result<bool, Bail> {
        // SAFETY (whole body): `v` is a live value of `self.ctx`; every reference taken here is
        // freed here.
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        let tag = unsafe { qjs::JS_VALUE_GET_NORM_TAG(v) };
        match tag {
            qjs::JS_TAG_INT => {
                let n = unsafe { qjs::JS_VALUE_GET_INT(v) };
                self.out.extend_from_slice(n.to_string().as_bytes());
            }
            qjs::JS_TAG_FLOAT64 => {
                // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
                let d = unsafe { qjs::JS_VALUE_GET_FLOAT64(v) };
                if !d.is_finite() {
                    self.out.extend_from_slice(b"null");
                } else if d == d.trunc() && d.abs() < 1e15 {
                    // Exact as an integer; -0 prints as 0, as ToString does.
                    self.out.extend_from_slice((d as i64).to_string().as_bytes());
                } else {
                    // Any other number: the engine's own ToString.
                    let mut len: qjs::size_t = 0;
                    // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
                    let ptr = unsafe { qjs::JS_ToCStringLen2(self.ctx, &mut len, v, false) };
                    if ptr.is_null() {
                        return Err(self.fail());
                    }
                    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len as usize) };
                    self.out.extend_from_slice(bytes);
                    // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
                    unsafe { qjs::JS_FreeCString(self.ctx, ptr) };
                }
            }
            qjs::JS_TAG_BOOL => {
                let b = unsafe { qjs::JS_VALUE_GET_BOOL(v) };
                self.out.extend_from_slice(if b { b"true" } else { b"false" });
            }
            qjs::JS_TAG_NULL => self.out.extend_from_slice(b"null"),
            qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_SYMBOL => return Ok(false),
            qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => self.string(v)?,
            qjs::JS_TAG_OBJECT => return self.object(v, depth),
            _ => return Err(Bail),
        }
        Ok(true)
    }

    fn object(&mut self, v: qjs::JSValue, depth: u32) -> Result<bool, Bail> {
        // SAFETY (whole body): as in `value`.
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        if unsafe { qjs::JS_IsProxy(v) } {
            return Err(Bail);
        }
        if unsafe { qjs::JS_IsFunction(self.ctx, v) } {
            return Ok(false);
        }
        if depth >= FAST_MAX_DEPTH {
            return Err(Bail);
        }
        self.nodes += 1;
        if self.nodes > FAST_MAX_NODES {
            return Err(Bail);
        }
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        if unsafe { qjs::JS_IsArray(v) } {
            let mut len: i64 = 0;
            if unsafe { qjs::JS_GetLength(self.ctx, v, &mut len) } < 0 {
                return Err(self.fail());
            }
            self.out.push(b'[');
            for i in 0..len {
                if i > 0 {
                    self.out.push(b',');
                }
                let Ok(index) = u32::try_from(i) else { return Err(Bail) };
                // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
                let item = self.own_data(v, unsafe { qjs::JS_NewAtomUInt32(self.ctx, index) })?;
                let written = self.value(item, depth + 1);
                unsafe { qjs::JS_FreeValue(self.ctx, item) };
                if !written? {
                    self.out.extend_from_slice(b"null");
                }
                self.fits()?;
            }
            self.out.push(b']');
            return Ok(true);
        }
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        if unsafe { qjs::JS_GetClassID(v) } != self.object_class {
            return Err(Bail);
        }
        let proto = unsafe { qjs::JS_GetPrototype(self.ctx, v) };
        let plain = unsafe {
            qjs::JS_IsNull(proto)
                || (qjs::JS_IsObject(proto) && qjs::JS_VALUE_GET_PTR(proto) == qjs::JS_VALUE_GET_PTR(self.object_proto))
        };
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        unsafe { qjs::JS_FreeValue(self.ctx, proto) };
        if !plain {
            return Err(Bail);
        }
        let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
        let mut count: u32 = 0;
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as i32;
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        if unsafe { qjs::JS_GetOwnPropertyNames(self.ctx, &mut tab, &mut count, v, flags) } < 0 {
            return Err(self.fail());
        }
        let result = self.members(v, tab, count, depth);
        unsafe { qjs::JS_FreePropertyEnum(self.ctx, tab, count) };
        result.map(|()| true)
    }

    fn members(&mut self, v: qjs::JSValue, tab: *mut qjs::JSPropertyEnum, count: u32, depth: u32) -> Result<(), Bail> {
        // SAFETY (whole body): `tab` holds `count` entries from `JS_GetOwnPropertyNames`.
        self.out.push(b'{');
        let mut first = true;
        for k in 0..count as usize {
            // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
            let atom = unsafe { (*tab.add(k)).atom };
            let item = self.own_data(v, unsafe { qjs::JS_DupAtom(self.ctx, atom) })?;
            let mark = self.out.len();
            if !first {
                self.out.push(b',');
            }
            // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
            let key = unsafe { qjs::JS_AtomToString(self.ctx, atom) };
            if unsafe { qjs::JS_IsException(key) } {
                unsafe { qjs::JS_FreeValue(self.ctx, item) };
                return Err(self.fail());
            }
            let quoted = self.string(key);
            // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
            unsafe { qjs::JS_FreeValue(self.ctx, key) };
            if let Err(bail) = quoted {
                unsafe { qjs::JS_FreeValue(self.ctx, item) };
                return Err(bail);
            }
            self.out.push(b':');
            let written = self.value(item, depth + 1);
            // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
            unsafe { qjs::JS_FreeValue(self.ctx, item) };
            if written? {
                first = false;
            } else {
                self.out.truncate(mark);
            }
            self.fits()?;
        }
        self.out.push(b'}');
        Ok(())
    }

    /// The value of own data property `atom` of `v` (a reference the caller frees); gives up on
    /// a missing property (a hole) or an accessor. Takes (frees) `atom`.
    fn own_data(&mut self, v: qjs::JSValue, atom: qjs::JSAtom) -> Result<qjs::JSValue, Bail> {
        // SAFETY (whole body): a live context, object and atom; the descriptor's references are
        // ours (freed unless the value is handed to the caller).
        let mut desc = qjs::JSPropertyDescriptor {
            flags: 0,
            value: qjs::JS_UNDEFINED,
            getter: qjs::JS_UNDEFINED,
            setter: qjs::JS_UNDEFINED,
        };
        // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
        let found = unsafe { qjs::JS_GetOwnProperty(self.ctx, &mut desc, v, atom) };
        unsafe { qjs::JS_FreeAtom(self.ctx, atom) };
        if found < 0 {
            return Err(self.fail());
        }
        if found == 0 {
            return Err(Bail);
        }
        if desc.flags & qjs::JS_PROP_GETSET as i32 != 0 {
            // SAFETY: a QuickJS C call on the live context with values it owns (module doc).
            unsafe {
                qjs::JS_FreeValue(self.ctx, desc.getter);
                qjs::JS_FreeValue(self.ctx, desc.setter);
                qjs::JS_FreeValue(self.ctx, desc.value);
            }
            return Err(Bail);
        }
        Ok(desc.value)
    }
}

/// Appends the restricted JSON text of `value` (see [`Fast`]) to `out`; `false` (with `out` in
/// an unspecified state) when the value is not plain data, or `proto` is not an object.
pub(crate) fn encode_into<'js>(ctx: &Ctx<'js>, value: &Value<'js>, proto: &Value<'js>, out: &mut Vec<u8>) -> bool {
    let Some(proto) = proto.as_object() else { return false };
    let mut fast = Fast {
        ctx: ctx.as_raw().as_ptr(),
        out: std::mem::take(out),
        nodes: 0,
        object_proto: proto.as_raw(),
        object_class: unsafe { qjs::JS_GetClassID(proto.as_raw()) }, // SAFETY: a live object.
    };
    let done = matches!(fast.value(value.as_raw(), 0), Ok(true));
    *out = fast.out;
    done
}

/// `__codemode_encode(value, objectPrototype)`: see [`Fast`].
pub(crate) fn js_encode<'js>(ctx: Ctx<'js>, args: Rest<Value<'js>>) -> rquickjs::Result<Value<'js>> {
    let (Some(value), Some(proto)) = (args.0.first(), args.0.get(1)) else {
        return Ok(Value::new_undefined(ctx));
    };
    let mut out = Vec::new();
    if !encode_into(&ctx, value, proto, &mut out) {
        return Ok(Value::new_undefined(ctx));
    }
    // SAFETY: a live context; the text is UTF-8 (escaped WTF-8 with surrogates replaced).
    let s = unsafe { qjs::JS_NewStringLen(ctx.as_raw().as_ptr(), out.as_ptr() as *const _, out.len() as _) };
    Ok(unsafe { Value::from_raw(ctx, s) }) // SAFETY: the new string's reference is ours.
}
