function __hammock_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __hammock_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __hammock_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __hammock_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __hammock_parse_tokens -S
    set -l unparsed_tokens (__hammock_tokens -pc)
    switch $unparsed_tokens[1]
    case 'hammock'
        __hammock_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'serve'
            __hammock_parse_subcommand 1 'host=' 'port=' 'store=' 'namespace=' 'latency=' 'base-path=' 'idle-timeout=' 'request-timeout=' 'seed=' 'admin-path=' 'admin-token=' 'journal-size=' 'strict' 'fault=+' 'allow-host=+' 'redact-header=+' 'no-validation' 'auth=' 'proxy=' 'upstream-ca=' 'allow-upstream=+' 'record=' 'record-stubs' 'redact-member=+' 'https' 'https-name=+' 'cert=' 'key=' 'http2' 'no-http2' 'watch' 'quiet' 'version' 'h/help'
        case 'record'
            __hammock_parse_subcommand 2 'host=' 'port=' 'stubs' 'redact-header=+' 'redact-member=+' 'quiet' 'version' 'h/help'
        case 'trust'
            __hammock_parse_subcommand 0 'install' 'version' 'h/help'
        case 'routes'
            __hammock_parse_subcommand 1 'version' 'h/help'
        case 'openapi'
            __hammock_parse_subcommand 1 'format=' 'title=' 'version' 'h/help'
        case 'generate'
            __hammock_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'swift'
                __hammock_parse_subcommand 1 'name=' 'version' 'h/help'
            end
        case 'init'
            __hammock_parse_subcommand 1 'force' 'version' 'h/help'
        case 'doctor'
            __hammock_parse_subcommand 0 'project=' 'port=' 'version' 'h/help'
        case 'help'
            __hammock_parse_subcommand -r 1 'version'
        end
    end
end

function __hammock_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __hammock_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __hammock_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __hammock_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__hammock_tokens -p)
    if test -z "$(__hammock_tokens -t)"
        set -l index (count (__hammock_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'hammock' -f
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'serve' -d 'Serve the resources described in a configuration file.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'record' -d 'Forward every request to a real backend and write what passed, redacted, as a configuration.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'trust' -d 'Show how to trust the certificate authority behind --https (and make it on first use).'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'routes' -d 'Print the routes a configuration file defines.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'openapi' -d 'Print the OpenAPI 3.1 document of the mock a configuration file describes.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'generate' -d 'Print source code for a client of the mock a configuration file or an OpenAPI document describes.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'init' -d 'Write a starter configuration: two related resources, a route of your own, sample data.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'doctor' -d 'Say what this machine has for each feature, and how to get what is missing.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" host' -l 'host' -d 'The address to bind (default: the file\'s host, else 127.0.0.1).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" port' -l 'port' -d 'The port to bind; 0 picks a free one (default: the file\'s port, else 8888).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" store' -l 'store' -d 'Where records live: memory, sqlite:PATH or postgres://USER@HOST:PORT/DATABASE (password in the URL or $PGPASSWORD).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" namespace' -l 'namespace' -d 'A PostgreSQL store\'s namespace (a schema of its own, made on first use): one database, separate data per developer or CI job.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" latency' -l 'latency' -d 'Simulated response time in seconds: MIN..MAX, or one value.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" base-path' -l 'base-path' -d 'A path prefix every route is served under, such as /api/v1 (default: the file\'s basePath, else none).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" idle-timeout' -l 'idle-timeout' -d 'Seconds a connection may stay idle before it is closed (default: the file\'s idleTimeout, else 60).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" request-timeout' -l 'request-timeout' -d 'Seconds a client may take to send one request before it gets 408 (default: the file\'s requestTimeout, else 30).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" seed' -l 'seed' -d 'The seed of the file\'s generated records, of stubs answering at random, of latencies and of faults: the same seed repeats a run (default: a random one, printed).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" admin-path' -l 'admin-path' -d 'The admin API\'s path prefix (default: the file\'s adminPath, else /__hammock).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" admin-token' -l 'admin-token' -d 'A token the admin API then requires as \'Authorization: Bearer TOKEN\' (default: $HAMMOCK_ADMIN_TOKEN, else none).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" journal-size' -l 'journal-size' -d 'How many requests the journal keeps for GET <admin>/requests (default: the file\'s journalSize, else 1000; 0 turns it off).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" strict' -l 'strict' -d 'Ignore what a request asks for itself: ?_delay=MS, Prefer: delay=MS, Prefer: status=CODE (default: the file\'s strict, else off).'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve"' -l 'fault' -d 'A failure to inject, after the file\'s faults; repeatable: \'GET /people/:id 503 20%\', \'POST /orders 503 retry-after=2\', \'* delay=300\', \'/search delay=50..400\', \'GET /photos/* bandwidth=3g\', \'POST /orders drop 10%\', \'* reset\' (kinds: drop, empty, reset, timeout, truncate, malformed; docs/server.md).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve"' -l 'allow-host' -d 'A host name the admin API and console answer besides localhost and IP addresses (the machine\'s own name, when teammates reach the mock by it); repeatable.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve"' -l 'redact-header' -d 'A header field whose values the admin API hides in the journal, besides Authorization, Cookie and the usual credentials; repeatable.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" no-validation' -l 'no-validation' -d 'Answer requests an OpenAPI document describes without checking them against it (parameters 400, media type 415, body 422).'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" auth' -l 'auth' -d 'A login for the mock (what a configuration\'s auth section holds, in a JSON or YAML file of its own): its token endpoint, users, and the routes it protects; an OpenAPI document\'s bearer requirements are then checked against its tokens, and it replaces the demo login made from the document\'s OAuth flows (docs/auth.md).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" proxy' -l 'proxy' -d 'A real backend (http:// or https://, with a path prefix if it has one) that what no resource, stub or route answers is forwarded to (docs/proxy.md).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" upstream-ca' -l 'upstream-ca' -d 'Certificates (PEM) an https backend\'s may chain to besides the system\'s roots: a staging backend\'s own CA, a corporate one.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve"' -l 'allow-upstream' -d 'A host the configuration file\'s proxy rules and webhooks may send to besides this machine\'s loopback (a file from someone else must not send the app\'s credentials elsewhere unasked); repeatable.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" record' -l 'record' -d 'With --proxy: write what passed through it, redacted, as a configuration to this file when the server stops (collections as resources, the rest as stubs), or as HAR 1.2 when its name ends in .har (docs/proxy.md).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" record-stubs' -l 'record-stubs' -d 'With --record: write every exchange as a stub (a replay answers exactly what was recorded, in order), no resources.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve"' -l 'redact-member' -d 'A JSON member, form field or query item whose values --record redacts, besides passwords, tokens and secrets by their usual names; repeatable. --redact-header names header fields.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" https' -l 'https' -d 'Serve HTTPS with a certificate from this machine\'s own certificate authority, made on first use in the user\'s configuration folder (hammock trust shows how to trust it; docs/https.md).'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve"' -l 'https-name' -d 'With --https: a name the certificate covers besides localhost, 127.0.0.1, ::1 and the host bound; repeatable.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" cert' -l 'cert' -d 'Serve HTTPS with this certificate (PEM, the chain after it) instead of the local authority\'s; with --key.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" key' -l 'key' -d 'The private key of --cert (PEM, unencrypted).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" http2' -l 'http2' -d 'Over HTTPS, speak HTTP/2 to clients that offer it (ALPN) besides HTTP/1.1; --no-http2 for HTTP/1.1 only.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" no-http2' -l 'no-http2' -d 'Over HTTPS, speak HTTP/2 to clients that offer it (ALPN) besides HTTP/1.1; --no-http2 for HTTP/1.1 only.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" watch' -l 'watch' -d 'Watch the configuration file and put changes in force without a restart.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" quiet' -l 'quiet' -d 'Do not log each request.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record" host' -l 'host' -d 'The address to bind (default: 127.0.0.1).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record" port' -l 'port' -d 'The port to bind; 0 picks a free one (default: 8888).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record" stubs' -l 'stubs' -d 'Write every exchange as a stub (a replay answers exactly what was recorded, in order), no resources.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record"' -l 'redact-header' -d 'A header field whose values are redacted, besides Authorization, Cookie and the usual credentials; repeatable.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record"' -l 'redact-member' -d 'A JSON member, form field or query item whose values are redacted, besides passwords, tokens and secrets by their usual names; repeatable.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record" quiet' -l 'quiet' -d 'Do not log each request.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock record" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock trust" install' -l 'install' -d 'Also do what can be done from here: add it to the booted iOS Simulator and the login keychain (macOS), or to the system\'s store (Debian and Ubuntu, as root).'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock trust" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock trust" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock routes" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock routes" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock openapi" format' -l 'format' -d 'json or yaml.' -rfka 'json yaml'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock openapi" title' -l 'title' -d 'The document\'s title (info.title); the file\'s name without its extension by default.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock openapi" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock openapi" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock generate" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock generate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_positional "hammock generate" -eq 1' -fa 'swift' -d 'Print Swift source: Codable models of the resources and an @API protocol with a method per route.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock generate swift" name' -l 'name' -d 'The protocol\'s name (the client is NAMEClient); the file\'s name by default.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock generate swift" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock generate swift" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock init" force' -l 'force' -d 'Replace the file if it exists.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock init" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock init" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock doctor" project' -l 'project' -d 'The checkout whose test tools (.venv) to look at.' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock doctor" port' -l 'port' -d 'The port to check is free (the examples use 8888).' -rfka ''
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock doctor" version' -l 'version' -d 'Show the version.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock doctor" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'hammock' -n '__hammock_should_offer_completions_for_flags_or_options "hammock help" version' -l 'version' -d 'Show the version.'
