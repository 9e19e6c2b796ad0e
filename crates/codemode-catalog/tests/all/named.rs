//! What a query names by its form (paths, repositories, commits, times, places, people, names of
//! things) and the shorthands it uses: each changes what the ask is about, not by its words.

use codemode_catalog::{Catalog, CatalogOptions};
use codemode_core::{ToolOrigin, ToolSpec};

use crate::support::{in_top3_of_public, small_catalog as catalog, top_local_id as top};

fn desk() -> Catalog {
    catalog(&[
        ("files", "list_directory", "List the entries of a directory"),
        ("files", "create_directory", "Create a directory"),
        ("files", "read_file", "Read a file"),
        ("files", "read_media_file", "Read an image or audio file as base64"),
        ("vcs", "show_commit", "Show the contents of a commit"),
        ("vcs", "checkout_branch", "Switch the working tree to a branch"),
        ("forge", "create_issue", "Open an issue in a repository"),
        ("forge", "search_projects", "Search the projects of the account"),
        ("cloud", "delete_vm", "Delete a virtual machine"),
        ("cloud", "get_vm", "Get a virtual machine"),
        ("cloud", "list_load_tests", "List the load tests and their test runs"),
        ("cloud", "list_resource_groups", "List the resource groups of a subscription"),
        ("clock", "get_current_time", "Get the current time in a timezone (IANA name, e.g. Europe/London)"),
        ("clock", "convert_time", "Convert a time between timezones"),
        ("chat", "get_user_profile", "Get a user's profile: title, status, timezone"),
        ("chat", "post_message", "Post a message to a channel"),
    ])
}

#[test]
fn paths_repositories_commits_and_branches_name_what_they_are() {
    let desk = desk();
    // `~/projects` is a directory, not the forge's projects.
    assert_eq!(top(&desk, "what's in ~/projects"), "files:list_directory");
    // `octo/app` is a repository: the issue goes to the forge.
    assert_eq!(top(&desk, "open a bug in octo/app about the crash"), "forge:create_issue");
    // `abc1234` is a commit.
    assert_eq!(top(&desk, "what changed in abc1234"), "vcs:show_commit");
    // `develop`, `master` and `trunk` are branches by convention.
    assert_eq!(top(&desk, "get me onto develop"), "vcs:checkout_branch");
    // `abc123` is too short for one: a session's id here, not a commit.
    let guide = catalog(&[
        ("vcs", "show_commit", "Show the contents of a commit"),
        ("store", "get_session", "Get a session by its id"),
    ]);
    assert_eq!(top(&guide, "fetch abc123"), "store:get_session");
    // `hotfix/1.2` is a branch.
    assert_eq!(top(&desk, "move me onto hotfix/1.2"), "vcs:checkout_branch");
    assert_eq!(top(&desk, "move me onto refs/2024"), "vcs:checkout_branch");
    // `archive/2024` is a directory (one part is no word), and to make one is to create it.
    assert_eq!(top(&desk, "make a folder called archive/2024"), "files:create_directory");
    // `cover.png` is an image as well as a file.
    assert_eq!(top(&desk, "give me cover.png as base64"), "files:read_media_file");
}

#[test]
fn the_name_of_a_thing_is_not_a_word_of_the_ask() {
    let desk = desk();
    // `test-07` names the VM: its `test` is not the load tests' word.
    assert_eq!(top(&desk, "delete vm test-07"), "cloud:delete_vm");
    assert_eq!(top(&desk, "load tests"), "cloud:list_load_tests");
    // A hyphenated word made of words that say what things are (`resource-group`) stays words.
    assert_eq!(top(&desk, "resource-group listing"), "cloud:list_resource_groups");
    // The value of `key=value` is a name; the key stays a word.
    assert!(top(&desk, "timezone=Europe/Paris").starts_with("clock:"));
    // A part that is no word (`hm`) makes the whole a coined name: `checkout` is not the ask.
    let health = catalog(&[
        ("vcs", "checkout_branch", "Switch the working tree to a branch"),
        ("cloud", "get_health_entity", "Get the health state of an entity of a health model"),
    ]);
    assert_eq!(top(&health, "state of hm-checkout"), "cloud:get_health_entity");
    assert_eq!(top(&health, "is payments-api green or red in hm-checkout"), "cloud:get_health_entity");
    // Words on both sides stay words (`read-only`, `checkout-branch`).
    assert_eq!(top(&health, "a checkout-branch for me"), "vcs:checkout_branch");
}

#[test]
fn clock_times_zones_and_places_make_a_time_question() {
    let desk = desk();
    // A query of named things only asks about what they are: times and zones.
    assert!(top(&desk, "3pm in New York is what in Berlin").starts_with("clock:"));
    assert!(top(&desk, "10:30 PST in CET").starts_with("clock:"));
    // A place names a zone in a question about the time only.
    assert!(top(&desk, "is it morning in Sydney right now").starts_with("clock:"));
    // Zone cities by their link names too (`Atlantic/Reykjavik`, `Asia/Calcutta`).
    for query in ["is it daylight in Reykjavik now", "local time in Calcutta", "is Baku awake at this hour"] {
        assert!(top(&desk, query).starts_with("clock:"), "{query:?}");
    }
    assert_eq!(top(&desk, "get the vm in Sydney"), "cloud:get_vm");
    let cloud_ask = desk.search_hits("get the vm in australia east", 1);
    assert_eq!(cloud_ask[0].entry.id, "openclaw:cloud:get_vm", "{cloud_ask:?}");
}

#[test]
fn a_possessive_of_an_unknown_capitalized_word_is_a_person() {
    let desk = desk();
    let hits = desk.search_hits("what's Dana's title", 1);
    assert_eq!(hits[0].entry.id, "openclaw:chat:get_user_profile", "{hits:?}");
    assert!(hits[0].matched.contains("user~"), "{hits:?}");
}

#[test]
fn shorthands_are_read_as_what_they_stand_for() {
    let desk = desk();
    assert_eq!(top(&desk, "mkdir -p build/out/tmp"), "files:create_directory");
    assert_eq!(top(&desk, "ls src"), "files:list_directory");
    assert_eq!(top(&desk, "nuke vm web-01"), "cloud:delete_vm");
    assert_eq!(top(&desk, "rg's in my sub"), "cloud:list_resource_groups");
    assert_eq!(top(&desk, "all rgs"), "cloud:list_resource_groups");
    // Command-line tools are the tools they name; `vs` compares.
    let tools = catalog(&[
        ("cloud", "cli_generate", "Generate Azure CLI commands for a goal"),
        ("cloud", "storage_account_create", "Create a storage account"),
        ("vcs", "diff", "Compare two branches or commits"),
        ("vcs", "create_branch", "Create a branch"),
    ]);
    assert_eq!(top(&tools, "what az command creates a storage account"), "cloud:cli_generate");
    assert_eq!(top(&tools, "feature/login vs main"), "vcs:diff");
    assert_eq!(top(&tools, "hotfix/2 versus main"), "vcs:diff");
}

fn cloud() -> Catalog {
    catalog(&[
        ("cloud", "group_list", "List the resource groups of a subscription"),
        ("cloud", "keyvault_secret_get", "Get a secret from a key vault"),
        ("cloud", "mysql_server_param_get", "Get a parameter of a MySQL server"),
        ("cloud", "postgres_server_param_get", "Get a parameter of a PostgreSQL server"),
        ("cloud", "acr_registry_repository_list", "List the repositories of a container registry"),
        ("cloud", "storage_blob_get", "Get a blob's properties"),
        ("cloud", "sql_db_create", "Create a database on a SQL server"),
        (
            "cloud",
            "sql_server_firewall-rule_create",
            "Create a firewall rule for a range of IP addresses on a SQL server",
        ),
        ("cloud", "monitor_workspace_log_query", "Run a KQL query over a Log Analytics workspace"),
        ("cloud", "postgres_database_query", "Run a query on a PostgreSQL database"),
        ("cloud", "get_settings", "Get the settings of an app"),
        ("web", "fetch", "Fetch a URL and return its text"),
        ("tracker", "jira_search", "Search issues with JQL (Jira Query Language)"),
        ("tracker", "jira_update_issue", "Update an issue's status, assignee or fields"),
        ("tracker", "jira_add_comment", "Add a comment to an issue"),
        ("tracker", "jira_add_watcher", "Add a user, by email, as a watcher of an issue"),
        ("tracker", "confluence_search", "Search pages with CQL (Confluence Query Language)"),
        ("forge", "create_issue", "Open a new issue, with labels, to report a bug"),
        ("forge", "search_issues", "Search issues and pull requests with the code host's search syntax"),
        ("forge", "get_global_security_advisory", "Get a global security advisory by its GHSA or CVE id"),
        ("forge", "update_issue_state", "Update the state of an issue"),
        ("vcs", "git_show", "Show the contents of a commit"),
        ("vcs", "git_log", "Show the commit log, optionally from a start date to an end date"),
    ])
}

#[test]
fn a_cloud_resource_name_says_what_it_names() {
    let cloud = cloud();
    // `kv-shop-prod` follows the cloud naming convention of a key vault; `pg-analytics` a
    // PostgreSQL server.
    assert_eq!(top(&cloud, "pull the api token out of kv-shop-prod"), "cloud:keyvault_secret_get");
    assert_eq!(top(&cloud, "get the work_mem parameter of pg-analytics"), "cloud:postgres_server_param_get");
    let more = catalog(&[
        ("cloud", "storagesync_service_get", "Get a storage sync service"),
        ("cloud", "loadtesting_testresource_create", "Create a load testing resource"),
        ("cloud", "managedlustre_fs_update", "Update an Azure Managed Lustre file system"),
        ("cloud", "search_index_get", "Get the fields of an index of an Azure AI Search service"),
        (
            "cloud",
            "servicefabric_managedcluster_nodetype_list",
            "List the node types of a Service Fabric managed cluster",
        ),
        ("cloud", "sql_server_show", "Show a SQL server"),
        ("cloud", "group_list", "List the resource groups of a subscription"),
        ("cloud", "functions_template_get", "Get a template for a new function"),
        ("cloud", "functionapp_get", "Get the details of a Function App"),
        ("cloud", "datadog_monitoredresources_list", "List the resources a Datadog monitor watches"),
    ]);
    // Service Fabric `sfmc-`, SQL server `sqlsrv-`.
    assert_eq!(top(&more, "what is in sfmc-prod"), "cloud:servicefabric_managedcluster_nodetype_list");
    assert_eq!(top(&more, "what is in sqlsrv-orders"), "cloud:sql_server_show");
    // Storage sync `sss-`, load testing `lt-`, Managed Lustre `amlfs-`, AI Search `srch-`.
    assert_eq!(top(&more, "what is in sss-prod"), "cloud:storagesync_service_get");
    // A file sync service is also written `fss-`.
    assert_eq!(top(&more, "what is in fss-corp"), "cloud:storagesync_service_get");
    assert_eq!(top(&more, "stand up lt-perf"), "cloud:loadtesting_testresource_create");
    assert_eq!(top(&more, "change amlfs-01 to Sunday"), "cloud:managedlustre_fs_update");
    assert_eq!(top(&more, "the products index on srch-prod"), "cloud:search_index_get");
    // Datadog `dd-`; a function app `fn-` or `func-` (the app, not a function's template).
    assert_eq!(top(&more, "what is in dd-prod"), "cloud:datadog_monitoredresources_list");
    assert_eq!(top(&more, "runtime stack of fn-billing"), "cloud:functionapp_get");
    assert_eq!(top(&more, "runtime stack of func-orders"), "cloud:functionapp_get");
    // A name that follows no convention is only a name.
    assert_eq!(top(&cloud, "what's in shop-prod-01"), top(&cloud, "what's in it"));
    // An endpoint's host name says what it is: a registry, not a page to fetch.
    assert_eq!(
        top(&cloud, "what images were pushed to myregistry.azurecr.io"),
        "cloud:acr_registry_repository_list"
    );
    assert_eq!(top(&cloud, "what's on example.com"), "web:fetch");
}

#[test]
fn addresses_ids_and_query_languages_name_what_they_are() {
    let cloud = cloud();
    // An IPv4 address or range is an IP.
    assert_eq!(top(&cloud, "allow 10.4.0.0/24 into pay-db-03"), "cloud:sql_server_firewall-rule_create");
    // An email address is a user.
    assert_eq!(top(&cloud, "add bob@corp.io to DEV-12"), "tracker:jira_add_watcher");
    // An ISO date is a date.
    assert_eq!(top(&cloud, "commits between 2025-01-01 and 2025-01-15"), "vcs:git_log");
    // A CVE or GHSA id is a security advisory.
    assert_eq!(top(&cloud, "look up GHSA-4xqg-8q7f-2m3v"), "forge:get_global_security_advisory");
    assert_eq!(top(&cloud, "details of CVE-2024-3094"), "forge:get_global_security_advisory");
    // A JQL filter is a search, whatever its field names (`assignee`, `updated`) say.
    assert_eq!(
        top(&cloud, "assignee = currentUser() AND status = 'In Progress' ORDER BY updated DESC"),
        "tracker:jira_search"
    );
    // One clause without a conjunction is not a filter: `status = done` is a value to set.
    assert_ne!(top(&cloud, "set status = done on the issue"), "tracker:jira_search");
    assert_eq!(top(&cloud, "space = DEV AND title ~ onboarding"), "tracker:confluence_search");
    // A code host's search qualifiers.
    assert_eq!(top(&cloud, "is:open label:bug"), "forge:search_issues");
    // A KQL pipeline, and SQL after the words that ask for it.
    assert_eq!(
        top(&cloud, "on law-prod: AppExceptions | where TimeGenerated > ago(1h) | take 20"),
        "cloud:monitor_workspace_log_query"
    );
    assert_eq!(
        top(&cloud, "run a SELECT on the inventory db: select * from items limit 10"),
        "cloud:postgres_database_query"
    );
}

#[test]
fn a_currency_names_a_price() {
    let shop = catalog(&[
        ("cloud", "get_vm", "Get a virtual machine"),
        ("cloud", "get_retail_prices", "Get the retail prices of SKUs: hourly and monthly rates"),
        ("clock", "convert_time", "Convert a time between timezones"),
    ]);
    // `USD`, `EUR` (ISO codes in capitals) and `$0.40` say the ask is about a price.
    assert_eq!(top(&shop, "Standard_E8s_v5 eastus2 hourly USD"), "cloud:get_retail_prices");
    assert_eq!(top(&shop, "D8as_v5 westeurope hourly in EUR"), "cloud:get_retail_prices");
    assert_eq!(top(&shop, "E8s v5 at most $0.40 an hour"), "cloud:get_retail_prices");
    // A word that only looks like one is no price.
    let hits = shop.search_hits("convert the hourly time usd", 3);
    assert!(hits.iter().all(|h| !h.matched.contains("price")), "{hits:#?}");
}

#[test]
fn a_deployment_short_name_is_no_word_of_the_ask() {
    let market = catalog(&[
        ("market", "list_products", "List the products of the marketplace for a subscription"),
        ("access", "list_role_assignments", "List the role assignments of a subscription"),
    ]);
    // `prod` qualifies the subscription; it is no prefix of `product`.
    let hits = market.search_hits("role assignments on the prod subscription", 2);
    assert_eq!(hits[0].entry.name, "list_role_assignments", "{hits:#?}");
    assert!(hits.iter().all(|h| !h.matched.contains("prod")), "{hits:#?}");
}

#[test]
fn a_key_combination_is_pressed() {
    let browser = catalog(&[
        ("browser", "press_key", "Press a key or key combination"),
        ("browser", "new_page", "Open a new page"),
        ("browser", "handle_dialog", "If a dialog was opened, handle it"),
        ("browser", "fill", "Type text into an input"),
    ]);
    assert_eq!(top(&browser, "send ctrl+shft+p"), "browser:press_key");
    assert_eq!(top(&browser, "hit cmd-k"), "browser:press_key");
    // `control-plane` is no key combination.
    assert_ne!(top(&browser, "control-plane page"), "browser:press_key");
    // A key named as keyboard tools name it, capitalised.
    assert_eq!(top(&browser, "the modal won't close, try dismissing it with Escape"), "browser:press_key");
    assert_eq!(top(&browser, "then ArrowDown twice"), "browser:press_key");
    // Not the word: escaping text is no key press.
    assert_ne!(top(&browser, "escape the quotes in the input text"), "browser:press_key");
    // A key name that opens the query is its verb (`enter` types into an input).
    assert_ne!(top(&browser, "Enter my name"), "browser:press_key");
}

#[test]
fn product_ids_name_what_they_are() {
    let forge = catalog(&[
        ("forge", "resolve_review_thread", "Resolve a review thread on a pull request"),
        ("forge", "add_discussion_comment", "Add a comment to a discussion"),
        ("forge", "update_issue", "Update an issue: title, body, state"),
        ("forge", "get_issue_comment", "Get a comment on an issue"),
        ("wiki", "download_attachment", "Download an attachment of a page"),
        ("wiki", "get_page", "Get a page of the wiki"),
        ("tracker", "search_fields", "Search the fields of the tracker by name"),
        ("tracker", "get_issue", "Get an issue by its key"),
        ("chat", "get_user_profile", "Get a user's profile: title, status, timezone"),
        ("chat", "get_channel_history", "Get the recent messages of a channel"),
    ]);
    // GitHub node ids: the prefix says what the object is.
    assert_eq!(top(&forge, "PRRT_kwDOAbc123 needs closing out"), "forge:resolve_review_thread");
    assert_eq!(top(&forge, "answer DC_kwDO99 with 'fixed in 2.3'"), "forge:add_discussion_comment");
    assert_eq!(top(&forge, "what does IC_kwDOA1b2 say"), "forge:get_issue_comment");
    // A name with an underscore is no node id.
    assert_ne!(top(&forge, "what does IC_total hold"), "forge:get_issue_comment");
    // Atlassian ids: a Confluence attachment, a Jira custom field.
    assert_eq!(top(&forge, "att44556 as a PDF please"), "wiki:download_attachment");
    assert_eq!(top(&forge, "which customfield_ is Story Points"), "tracker:search_fields");
    assert_eq!(top(&forge, "customfield_10016 meaning"), "tracker:search_fields");
    // A Slack user id, as short as the workspace's own.
    assert_eq!(top(&forge, "U02ABCD: tz and phone number"), "chat:get_user_profile");
    assert_eq!(top(&forge, "latest in C02XY9Z"), "chat:get_channel_history");
}

#[test]
fn a_workflow_status_and_a_sum_name_what_they_are() {
    let desk = catalog(&[
        ("tracker", "move_issue", "Move an issue to another project"),
        ("tracker", "transition_issue", "Transition an issue to a new status"),
        ("tracker", "create_issue", "Create an issue"),
        ("demo", "get_sum", "Returns the sum of two numbers"),
        ("demo", "list_items", "List the items, a page at a time"),
    ]);
    // `Done`, `In Review`: a status, which an issue moves to by a transition.
    assert_eq!(top(&desk, "push ENG-5 to Done"), "tracker:transition_issue");
    assert_eq!(top(&desk, "kick KAN-7 over to In Review"), "tracker:transition_issue");
    // A move to a status, even in lower case after `to`, is a transition, whatever else the
    // query says (`started` names a state, which alone would make it a lookup).
    assert_eq!(top(&desk, "ENG-5 can go to done"), "tracker:transition_issue");
    assert_eq!(
        top(&desk, "kick KAN-7 over to In Progress now that I've started on it"),
        "tracker:transition_issue"
    );
    // Not the words: `done` in lower case, `in progress` as prose.
    assert_ne!(top(&desk, "move ENG-5 to PAY when done"), "tracker:transition_issue");
    let hits = desk.search_hits("Done with ENG-5, file the next one", 3);
    assert!(hits.iter().all(|h| !h.matched.contains("status")), "{hits:#?}");
    // Two numbers joined by `plus`, or added: a sum.
    assert_eq!(top(&desk, "add 2 and 3"), "demo:get_sum");
    assert_eq!(top(&desk, "1843 plus 299?"), "demo:get_sum");
    // Numbers that are not added: pages of a list.
    assert_eq!(top(&desk, "items on pages 2 and 3"), "demo:list_items");
}

#[test]
fn a_quoted_value_is_no_word_of_the_ask() {
    let desk = catalog(&[
        ("flags", "create_feature_flag", "Create a new feature flag"),
        ("vcs", "git_checkout", "Switches branches"),
        ("forum", "add_discussion_comment", "Add a comment to a discussion"),
        ("forge", "submit_review", "Submit a pending review: approve, comment or request changes"),
    ]);
    // The message to post is a value: its words (`new flag`, `checkout`, `switches branches`)
    // match nothing.
    let hits = desk.search_hits("comment 'new flag, checkout switches branches now' on discussion 7", 3);
    assert_eq!(hits[0].entry.name, "add_discussion_comment", "{hits:#?}");
    for hit in &hits {
        for word in ["flag", "checkout", "switch", "branch"] {
            assert!(!hit.matched.contains(word), "{word}: {hits:#?}");
        }
    }
    // One or two plain lower-case words may be a value the tools name.
    let hits = desk.search_hits("send my pending review off as 'request changes'", 1);
    assert_eq!(hits[0].entry.name, "submit_review", "{hits:#?}");
    assert!(hits[0].matched.contains("request"), "{}", hits[0].matched);
    // An apostrophe is no quote.
    let hits = desk.search_hits("don't create Dana's flag yet", 1);
    assert_eq!(hits[0].entry.name, "create_feature_flag", "{hits:#?}");
}

#[test]
fn time_spent_is_a_worklog_and_a_window_is_not() {
    let desk = catalog(&[
        ("tracker", "add_worklog", "Add a worklog entry to an issue. time_spent: e.g. '1h 30m', '4h'"),
        ("tracker", "add_comment", "Add a comment to an issue"),
        ("tracker", "get_issue", "Get an issue"),
        ("logs", "query_logs", "Query the logs of a workspace over a time range"),
    ]);
    assert_eq!(top(&desk, "book 3h against OPS-441 for yesterday's on-call"), "tracker:add_worklog");
    assert_eq!(top(&desk, "put 1h30m on OPS-9"), "tracker:add_worklog");
    // A window of time is no time spent.
    assert_ne!(top(&desk, "errors on OPS-9 over the last 3h"), "tracker:add_worklog");
    assert_ne!(top(&desk, "OPS-9 log lines at 1h granularity"), "tracker:add_worklog");
    // Nor is a capital `3D`.
    let hits = desk.search_hits("a 3D view of OPS-9", 3);
    assert!(hits.iter().all(|h| !h.matched.contains("worklog")), "{hits:#?}");
}

#[test]
fn a_setting_assigned_a_value_is_a_parameter_to_set() {
    // `innodb_lock_wait_timeout = 120`: the name's words (`lock`, `wait`) are no words of the
    // ask, the assignment asks to set a server parameter.
    let db = catalog(&[
        ("db", "server_param_get", "Retrieves the current value of a server configuration parameter"),
        ("db", "server_param_set", "Sets a single server configuration parameter"),
        ("db", "server_config_get", "Get the configuration of a server"),
        ("kv", "key_lock_set", "Set the lock state of a key so it cannot change"),
        ("jobs", "wait_for_job", "Wait until a job finishes or a timeout passes"),
    ]);
    assert_eq!(top(&db, "innodb_lock_wait_timeout = 120 on shopdb-01"), "db:server_param_set");
    assert_eq!(top(&db, "max_connections=500 on server db-01"), "db:server_param_set");
    // A tool's own argument written with its value is not an assignment: its words still say
    // which tool.
    assert_eq!(top(&db, "lock_state true for key app:color"), "kv:key_lock_set");
}

#[test]
fn a_share_of_an_audience_is_a_rollout() {
    let flags = catalog(&[
        ("flags", "get_environments", "List the environments of a project, with their users"),
        ("flags", "update_flag", "Update a feature flag: its targeting rules or rollout strategy"),
        ("monitor", "create_alert", "Create an alert on a metric such as CPU"),
    ]);
    // `20% of users` is served by a rollout; `over 80%` is a threshold, no audience.
    assert_eq!(top(&flags, "new-nav for 20% of users in production"), "flags:update_flag");
    assert_eq!(top(&flags, "tell me when CPU goes over 80%"), "monitor:create_alert");
}

#[test]
fn a_chat_id_names_the_chat_server() {
    let tools = catalog(&[
        ("clock", "get_current_time", "Get the current time in a specific timezone"),
        ("clock", "convert_time", "Convert a time between timezones"),
        ("forge", "search_users", "Search users by name, location or followers"),
        ("chat", "slack_get_users", "Get the users of the workspace"),
        ("chat", "slack_get_user_profile", "Get detailed profile information for a specific user"),
    ]);
    // `U02ABCDEF` is written as Slack writes a user id: the question is about a Slack user, not
    // about clocks.
    let hit = top(&tools, "U02ABCDEF: job title and timezone?");
    assert!(hit.starts_with("chat:slack_get_user"), "{hit}");
}

#[test]
fn a_tool_that_takes_nothing_cannot_act_on_a_named_thing() {
    let parameters = serde_json::json!({
        "type": "object",
        "properties": { "path": { "type": "string", "description": "File to read" } },
        "required": ["path"],
    });
    let media = Catalog::build(
        vec![
            ToolSpec::new("get_sample_image", ToolOrigin::BundledPlugin, "media")
                .description("Returns a sample picture"),
            ToolSpec::new("read_media_file", ToolOrigin::BundledPlugin, "media")
                .description("Read a file and return it with its MIME type")
                .parameters(parameters),
        ],
        &CatalogOptions::default(),
    );
    let top = |query: &str| media.search(query, 1)[0].id.clone();
    // A file the query names is an argument, and only one tool takes any: its words (`picture`)
    // do not make the other one act on it.
    assert_eq!(top("show me the picture chart.png"), "openclaw:media:read_media_file");
    // With nothing named, the words decide.
    assert_eq!(top("show me a sample picture"), "openclaw:media:get_sample_image");
}

#[test]
fn a_size_on_screen_is_a_width_and_a_height() {
    let browser = catalog(&[
        ("browser", "resize_page", "Resize the page to a width and height"),
        ("browser", "take_screenshot", "Take a screenshot of the page layout"),
    ]);
    for query in [
        "check the mobile layout at 390x844",
        "check the mobile layout: 390 wide by 844 tall",
        "check the layout at 1280 by 720",
    ] {
        assert_eq!(top(&browser, query), "browser:resize_page", "{query}");
    }
    // A number that is no size (`by 2`, no unit) leaves the words to decide.
    assert_eq!(top(&browser, "check the mobile layout"), "browser:take_screenshot");
    assert_eq!(top(&browser, "check the layout of 3 pages by 2pm"), "browser:take_screenshot");
}

#[test]
fn an_entry_that_says_nothing_of_the_named_things_is_less_likely() {
    // With the 16 public catalogs loaded: `Escape` is a key and `acme/web` a repository; entries
    // with no word for a key (or a repository) give way to those that have one.
    let public = crate::support::public_catalog();
    for (tool, query) in [
        ("playwright:browser_press_key", "close the popup by sending the Escape keystroke"),
        (
            "github:actions_get",
            "the nightly build on acme/web produced an artifact with id 7781 holding the test report. Grab it",
        ),
    ] {
        let hits: Vec<String> = public.search(query, 3).iter().map(|e| e.id.clone()).collect();
        assert!(hits.iter().any(|id| id.ends_with(tool)), "{query}: {hits:?}");
    }
    // A dotted namespace before the slash (`Microsoft.Web/sites`) is a resource type, not a
    // repository: the cloud's schema tool keeps the lead.
    let mixed = catalog(&[
        ("cloud", "get_resource_schema", "Get the schema of a resource type"),
        ("forge", "get_repository_schema", "Get the schema of a repository"),
    ]);
    assert_eq!(top(&mixed, "the type schema of Microsoft.Web/sites"), "cloud:get_resource_schema");
}

#[test]
fn a_key_name_that_opens_a_sentence_is_its_verb() {
    let browser = catalog(&[
        ("browser", "press_key", "Press a key on the keyboard"),
        ("browser", "fill_form", "Fill the fields of a form: enter text into several fields"),
    ]);
    assert_eq!(
        top(&browser, "The form is open. Enter the shipping details: name Ana, city Madrid"),
        "browser:fill_form"
    );
    assert_eq!(top(&browser, "the dialog is open, hit Enter"), "browser:press_key");
}

#[test]
fn a_hex_colour_is_a_colour_not_a_channel() {
    let desk = catalog(&[
        ("chat", "get_channel_info", "Get the info of a channel: its topic and members"),
        ("forge", "update_label", "Update a label: its name, color and description"),
    ]);
    assert_eq!(top(&desk, "anything with #d73a4a"), "forge:update_label");
    assert_eq!(top(&desk, "anything with #general"), "chat:get_channel_info");
}

#[test]
fn a_sectioned_configuration_key_is_a_setting() {
    // `Checkout:UseLegacy` is an app setting's key, not a word of the ask (`checkout`).
    let desk = catalog(&[
        ("config", "get_key_values", "Get the key-value settings of a configuration store"),
        ("repo", "git_checkout", "Checkout a branch: switch the working tree to it"),
    ]);
    assert_eq!(top(&desk, "what is Checkout:UseLegacy right now"), "config:get_key_values");
    assert_eq!(top(&desk, "what is Logging:LogLevel:Default=Warning"), "config:get_key_values");
    // A time or a search qualifier is no key.
    assert_eq!(top(&desk, "checkout main at 15:30"), "repo:git_checkout");
}

#[test]
fn a_build_file_name_is_a_file() {
    // `docker/Dockerfile` is a file in a repository, not an `owner/repo`.
    in_top3_of_public(
        "github",
        "get_file_contents",
        &["print docker/Dockerfile as it is on develop in acme/api"],
    );
}

#[test]
fn a_number_after_a_numbered_noun_names_one() {
    // `PR 77` names a pull request as `#77` names an issue.
    in_top3_of_public("github", "pull_request_read", &["what changed in PR 77? show me the patch"]);
    in_top3_of_public("github", "update_pull_request", &["acme/web PR #90 needs some edits to its text"]);
}
