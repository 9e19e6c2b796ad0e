//! The guest vocabulary: the MCP guest table refuses what the prelude could not serve.

use codemode_core::guest::{
    FUNCTION_MEMBER_NAMES, GuestTableError, MCP_SERVER_MEMBERS, McpGuestServer, McpGuestTable,
    OBJECT_MEMBER_NAMES, TOOLS_HELPERS,
};

#[test]
fn server_identifiers_must_be_identifiers() {
    assert_eq!(
        McpGuestServer::new("chrome-devtools", "chrome-devtools"),
        Err(GuestTableError::ServerIdent("chrome-devtools".into()))
    );
    assert!(McpGuestServer::new("delete", "delete").is_err(), "a reserved word");
    let server = McpGuestServer::new("chromeDevtools", "chrome-devtools").unwrap();
    assert_eq!((server.ident(), server.name()), ("chromeDevtools", "chrome-devtools"));
    let mut table = McpGuestTable::default();
    table.add_server(server.clone()).unwrap();
    assert_eq!(table.add_server(server), Err(GuestTableError::DuplicateServer("chromeDevtools".into())));
}

#[test]
fn tool_identifiers_are_safe_new_and_not_server_members() {
    let mut server = McpGuestServer::new("gh", "gh").unwrap();
    for member in MCP_SERVER_MEMBERS {
        let err = server.add_tool(*member, *member).unwrap_err();
        assert!(err.to_string().contains("collides with a built-in member"), "{err}");
    }
    for unsafe_ident in ["__proto__", "constructor", "prototype", "a-b", "", "é"] {
        let err = server.add_tool(unsafe_ident, unsafe_ident).unwrap_err();
        assert!(err.to_string().contains("is not a safe identifier"), "{unsafe_ident}: {err}");
    }
    server.add_tool("delete", "delete").unwrap();
    assert!(server.add_tool("delete", "other").unwrap_err().to_string().contains("appears twice"));
    assert_eq!(server.tools().len(), 1, "refused tools are not added");
}

#[test]
fn the_name_lists_do_not_overlap_where_they_must_not() {
    for helper in TOOLS_HELPERS {
        assert!(!MCP_SERVER_MEMBERS.contains(helper));
    }
    for name in FUNCTION_MEMBER_NAMES {
        assert!(!OBJECT_MEMBER_NAMES.contains(name), "{name} is listed twice");
    }
    assert!(OBJECT_MEMBER_NAMES.contains(&"then"), "a `then` member would make an object a thenable");
}
