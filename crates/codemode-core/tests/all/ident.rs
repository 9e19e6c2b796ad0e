//! JavaScript identifier rules: checks, reserved words, normalization, and the mapping of every
//! server and tool name in the real catalogs (snapshot).

use codemode_core::fuzz;
use codemode_core::ident::{
    RESERVED_WORDS, is_identifier, is_identifier_name, is_reserved_word, to_camel_identifier,
    to_snake_identifier,
};

#[test]
fn reserved_words_are_sorted_unique_and_complete() {
    assert!(
        RESERVED_WORDS.windows(2).all(|w| w[0] < w[1]),
        "RESERVED_WORDS must stay sorted (binary search)"
    );
    let required = [
        // ECMAScript reserved words
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        // strict mode and await
        "implements",
        "interface",
        "let",
        "package",
        "private",
        "protected",
        "public",
        "static",
        "yield",
        "await",
        // literals
        "null",
        "true",
        "false",
        // dangerous names and global values
        "__proto__",
        "constructor",
        "prototype",
        "undefined",
        "NaN",
        "Infinity",
        "eval",
        "arguments",
    ];
    for word in required {
        assert!(is_reserved_word(word), "{word} must be reserved");
        assert!(is_identifier_name(word), "{word} is still an identifier name (valid property key)");
        assert!(!is_identifier(word), "{word} is not a safe identifier");
    }
    assert_eq!(RESERVED_WORDS.len(), required.len(), "no word beyond the documented list");
    for contextual in ["async", "get", "set", "of", "type", "from", "as", "Delete", "NULL", "proto"] {
        assert!(!is_reserved_word(contextual), "{contextual}");
        assert!(is_identifier(contextual), "{contextual}");
    }
}

#[test]
fn identifier_syntax() {
    for good in ["a", "_", "$", "$api", "_private", "createIssue", "a1", "A_B$9", "x".repeat(1000).as_str()] {
        assert!(is_identifier(good), "{good}");
    }
    for bad in ["", "1a", "9", "a-b", "a.b", "a b", " a", "a\n", "-", "a/b", "@x"] {
        assert!(!is_identifier_name(bad), "{bad:?}");
        assert!(!is_identifier(bad), "{bad:?}");
    }
}

#[test]
fn unicode_is_never_an_identifier() {
    // Valid in JavaScript, refused here on purpose (look-alikes, invisible characters).
    for name in ["café", "ключ", "名前", "a\u{200b}b", "\u{0430}dmin", "ℌ", "x\u{0301}"] {
        assert!(!is_identifier_name(name), "{name}");
        assert!(is_identifier(&to_snake_identifier(name)));
        assert!(is_identifier(&to_camel_identifier(name)));
    }
    assert_eq!(to_snake_identifier("café-menu"), "caf_menu");
    assert_eq!(to_camel_identifier("café-menu"), "cafMenu");
    assert_eq!(to_snake_identifier("ключ"), "_");
    assert_eq!(to_camel_identifier("名前"), "_");
    assert_eq!(to_camel_identifier("\u{0430}dmin"), "dmin");
}

#[test]
fn snake_mapping() {
    let cases = [
        ("chrome-devtools", "chrome_devtools"),
        ("create_issue", "create_issue"),
        ("get.thing", "get_thing"),
        ("a--..b", "a_b"),
        ("-leading", "_leading"),
        ("trailing-", "trailing_"),
        ("KeepCase", "KeepCase"),
        ("$api", "$api"),
        ("2fa", "_2fa"),
        ("9-lives", "_9_lives"),
        ("", "_"),
        ("---", "_"),
        ("delete", "delete_"),
        ("constructor", "constructor_"),
        ("__proto__", "__proto___"),
        ("undefined", "undefined_"),
        ("Delete", "Delete"),
        ("mcp server/v2", "mcp_server_v2"),
    ];
    for (name, expected) in cases {
        assert_eq!(to_snake_identifier(name), expected, "{name:?}");
    }
}

#[test]
fn camel_mapping() {
    let cases = [
        ("chrome-devtools", "chromeDevtools"),
        ("create_issue", "createIssue"),
        ("get.thing", "getThing"),
        ("take_snapshot", "takeSnapshot"),
        ("getHTTPStatus", "getHTTPStatus"),
        ("get_HTTP_status", "getHTTPStatus"),
        ("GitHub-tools", "GitHubTools"),
        ("mcp-atlassian", "mcpAtlassian"),
        ("a__b", "aB"),
        ("_private", "private2"),
        ("__proto__", "proto"),
        ("delete", "delete2"),
        ("new", "new2"),
        ("constructor", "constructor2"),
        ("NaN", "NaN2"),
        ("3d-model", "_3dModel"),
        ("get_2fa_code", "get2faCode"),
        ("$api", "$api"),
        ("a_$b", "a$b"),
        ("", "_"),
        ("_", "_"),
        ("-.-", "_"),
        ("x", "x"),
    ];
    for (name, expected) in cases {
        assert_eq!(to_camel_identifier(name), expected, "{name:?}");
    }
}

#[test]
fn collisions_are_left_to_callers() {
    // Documented: distinct names may normalize to the same identifier.
    for name in ["create_issue", "create-issue", "create.issue", "createIssue", "create__issue"] {
        assert_eq!(to_camel_identifier(name), "createIssue", "{name}");
    }
    for name in ["a-b", "a.b", "a_b", "a b", "a\u{e9}b"] {
        assert_eq!(to_snake_identifier(name), "a_b", "{name}");
    }
    // Reserved-word suffixes can meet real names too.
    assert_eq!(to_camel_identifier("delete"), to_camel_identifier("delete2"));
    assert_eq!(to_snake_identifier("delete"), to_snake_identifier("delete_"));
}

#[test]
fn normalizers_are_idempotent_identifiers_on_generated_names() {
    let mut rng = super::hint::Rng::new(3);
    let alphabet: Vec<char> = "aZ_$09-. /é名\u{200b}\u{0}".chars().collect();
    for _ in 0..5_000 {
        let len = rng.below(12) as usize;
        let name: String = (0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize]).collect();
        fuzz::check_identifier(name.as_bytes());
    }
    for word in RESERVED_WORDS {
        fuzz::check_identifier(word.as_bytes());
    }
    for _ in 0..2_000 {
        let bytes: Vec<u8> = (0..rng.below(16)).map(|_| rng.below(256) as u8).collect();
        fuzz::check_identifier(&bytes);
    }
}

#[test]
fn catalog_names_snapshot() {
    let mut lines = String::new();
    let mut camel_seen = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (file, catalog) in super::hint::catalogs() {
        let server = catalog["server"].as_str().unwrap_or(&file).to_owned();
        lines.push_str(&format!(
            "server {server}: camel {} | snake {}\n",
            to_camel_identifier(&server),
            to_snake_identifier(&server)
        ));
        camel_seen.clear();
        for tool in catalog["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            let camel = to_camel_identifier(name);
            let snake = to_snake_identifier(name);
            assert!(is_identifier(&camel) && is_identifier(&snake));
            camel_seen.entry(camel.clone()).or_default().push(name.to_owned());
            lines.push_str(&format!("  {name}: camel {camel} | snake {snake}\n"));
        }
        for (camel, names) in &camel_seen {
            if names.len() > 1 {
                lines.push_str(&format!("  COLLISION {camel}: {}\n", names.join(", ")));
            }
        }
    }
    insta::assert_snapshot!("catalog_names", lines);
}
