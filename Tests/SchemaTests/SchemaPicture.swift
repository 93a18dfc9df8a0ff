import Foundation
import LibPQClient

/// The schema the migrations build, read back from the catalog as files a reader can open:
/// one per table (columns with their comments, constraints, indexes, triggers, policies,
/// privileges), per view and per function (`pg_get_functiondef`: the body that runs, not the
/// history of bodies in `migrations/`), and `schemas.sql` for schemas, sequences and roles.
///
/// Everything is in a stable order and free of what differs between databases built from the
/// same migrations: owners (the migrating role), oids, and the monthly partitions of
/// `usage_events`, whose names follow the date the migrations ran.
enum SchemaPicture {
    /// The folder in the repository that holds the checked-in picture.
    static let folderName = "schema"

    /// The command that rewrites the checked-in picture from the migrations.
    static let refreshCommand = "scripts/refresh-schema"

    /// Path (relative to `schema/`) → content.
    static func files(_ connection: PGConnection) async throws -> [String: String] {
        var files: [String: String] = [:]
        // Names in `public` print bare, any other schema's qualified, whatever the session had.
        _ = try await connection.simpleQuery(unsafeSQL: "SET search_path = public")
        let major = try await connection.query("SELECT current_setting('server_version_num')::int / 10000 AS major").single()
            .decode("major", as: Int.self)
        files["README.md"] = readme(postgresMajor: major)
        files["schemas.sql"] = try await schemas(connection)
        for (path, text) in try await tables(connection) { files[path] = text }
        for (path, text) in try await views(connection) { files[path] = text }
        for (path, text) in try await functions(connection) { files[path] = text }
        return files
    }

    static func readme(postgresMajor: Int) -> String {
        """
        # The schema as it is now

        Generated from a database with every migration of `migrations/` applied (PostgreSQL \(postgresMajor)), by
        `\(refreshCommand)`. Do not edit: the suite (`SchemaPictureTests`) builds the schema from the
        migrations, renders it again and fails, printing the difference, when it differs from
        these files. After writing a migration, run `\(refreshCommand)` and commit what changed
        beside it.

        - `tables/SCHEMA.TABLE.sql`: columns (with their comments), constraints, indexes, triggers,
          row-level security and policies, privileges.
        - `views/SCHEMA.VIEW.sql`: the view's definition and privileges.
        - `functions/SCHEMA.NAME.sql`: the function's current definition (`pg_get_functiondef`),
          comment and privileges; overloads share a file.
        - `schemas.sql`: schemas, extensions, sequences and the roles the migrations create.

        Left out: owners (the role that ran the migrations) and the monthly partitions of
        `usage_events` (`usage_events_YYYY_MM`), which are named after the months around the day
        the migrations ran; they are created and archived as `docs/operations.md` describes.

        """
    }

    // MARK: - Queries

    /// The schemas the migrations own.
    static let ownSchemas = "n.nspname IN ('public', 'analytics', 'archive')"

    /// Monthly partitions are named after the date the migrations ran: left out.
    static let notTimeNamed = "NOT (c.relispartition AND c.relname ~ '_[0-9]{4}_[0-9]{2}$')"

    /// Non-owner privileges of an ACL, one line per grantee: `GRANT a, b ON kind name TO role;`.
    static func grants(acl: String, owner: String, on object: String) -> String {
        """
        SELECT string_agg(format('GRANT %s ON %s TO %s;', privileges, \(object), grantee), E'\\n' ORDER BY grantee) FROM (
            SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END AS grantee,
                   string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) AS privileges
            FROM aclexplode(\(acl)) a WHERE a.grantee <> \(owner) GROUP BY a.grantee
        ) g
        """
    }

    static let tableQuery = PGQuery(
        unsafeSQL: """
            SELECT n.nspname AS schema, c.relname AS name, format('%I.%I', n.nspname, c.relname) AS qualified,
                   c.relkind = 'p' AS partitioned, pg_get_partkeydef(c.oid) AS partition_key,
                   (SELECT format('%I.%I', pn.nspname, p.relname) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
                    JOIN pg_namespace pn ON pn.oid = p.relnamespace WHERE i.inhrelid = c.oid) AS parent,
                   pg_get_expr(c.relpartbound, c.oid) AS bound,
                   c.relrowsecurity AS rls, c.relforcerowsecurity AS forced, obj_description(c.oid, 'pg_class') AS comment,
                   (SELECT string_agg(
                        coalesce(E'    -- ' || replace(col_description(c.oid, a.attnum), E'\\n', E'\\n    -- ') || E'\\n', '')
                        || '    ' || quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                        || CASE WHEN a.attidentity = 'a' THEN ' GENERATED ALWAYS AS IDENTITY'
                                WHEN a.attidentity = 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY' ELSE '' END
                        || CASE WHEN a.attgenerated = 's' THEN ' GENERATED ALWAYS AS (' || pg_get_expr(d.adbin, d.adrelid) || ') STORED'
                                WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid) ELSE '' END
                        || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                        E',\\n' ORDER BY a.attnum)
                    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
                   (SELECT string_agg(format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s;', n.nspname, c.relname, k.conname, pg_get_constraintdef(k.oid)),
                                      E'\\n' ORDER BY k.conname)
                    FROM pg_constraint k WHERE k.conrelid = c.oid AND k.conislocal) AS constraints,
                   (SELECT string_agg(pg_get_indexdef(x.indexrelid) || ';', E'\\n' ORDER BY ic.relname)
                    FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
                    WHERE x.indrelid = c.oid
                      AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = c.oid)
                      AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = x.indexrelid)) AS indexes,
                   (SELECT string_agg(pg_get_triggerdef(t.oid) || ';', E'\\n' ORDER BY t.tgname)
                    FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal AND t.tgparentid = 0) AS triggers,
                   (SELECT string_agg(format('CREATE POLICY %I ON %I.%I AS %s FOR %s TO %s%s%s;', p.policyname, n.nspname, c.relname, p.permissive, p.cmd,
                                             array_to_string(p.roles, ', '),
                                             coalesce(E'\\n    USING (' || p.qual || ')', ''), coalesce(E'\\n    WITH CHECK (' || p.with_check || ')', '')),
                                      E'\\n' ORDER BY p.policyname)
                    FROM pg_policies p WHERE p.schemaname = n.nspname AND p.tablename = c.relname) AS policies,
                   (\(grants(acl: "c.relacl", owner: "c.relowner", on: "format('%I.%I', n.nspname, c.relname)"))) AS privileges
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE \(ownSchemas) AND c.relkind IN ('r', 'p') AND \(notTimeNamed)
            ORDER BY 1, 2
            """)

    static let viewQuery = PGQuery(
        unsafeSQL: """
            SELECT n.nspname AS schema, c.relname AS name, format('%I.%I', n.nspname, c.relname) AS qualified, c.relkind = 'm' AS materialized,
                   obj_description(c.oid, 'pg_class') AS comment, pg_get_viewdef(c.oid, true) AS definition,
                   (SELECT string_agg(format('COMMENT ON COLUMN %I.%I.%I IS %L;', n.nspname, c.relname, a.attname, col_description(c.oid, a.attnum)),
                                      E'\\n' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND col_description(c.oid, a.attnum) IS NOT NULL) AS column_comments,
                   (\(grants(acl: "c.relacl", owner: "c.relowner", on: "format('%I.%I', n.nspname, c.relname)"))) AS privileges
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE \(ownSchemas) AND c.relkind IN ('v', 'm')
            ORDER BY 1, 2
            """)

    static let functionQuery = PGQuery(
        unsafeSQL: """
            SELECT n.nspname AS schema, p.proname AS name, pg_get_function_identity_arguments(p.oid) AS arguments,
                   pg_get_functiondef(p.oid) AS definition, obj_description(p.oid, 'pg_proc') AS comment,
                   p.proacl IS NULL AS default_privileges,
                   (\(grants(acl: "p.proacl", owner: "p.proowner", on: "format('FUNCTION %I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid))"))) AS privileges
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE \(ownSchemas) AND p.prokind IN ('f', 'p')
              AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
            ORDER BY 1, 2, 3
            """)

    static let schemaQuery = PGQuery(
        unsafeSQL: """
            SELECT 1 AS part, n.nspname AS name,
                   format('CREATE SCHEMA IF NOT EXISTS %I;', n.nspname)
                   || coalesce(E'\\n' || format('COMMENT ON SCHEMA %I IS %L;', n.nspname, obj_description(n.oid, 'pg_namespace')), '')
                   || coalesce(E'\\n' || (\(grants(acl: "n.nspacl", owner: "n.nspowner", on: "'SCHEMA ' || quote_ident(n.nspname)"))), '') AS text
            FROM pg_namespace n WHERE \(ownSchemas)
            UNION ALL
            SELECT 2, e.extname, format('CREATE EXTENSION IF NOT EXISTS %I;', e.extname) FROM pg_extension e
            UNION ALL
            SELECT 3, c.oid::regclass::text,
                   format('CREATE SEQUENCE %I.%I AS %s;', n.nspname, c.relname, format_type(s.seqtypid, NULL))
                   || coalesce(E'\\n' || (SELECT format('ALTER SEQUENCE %I.%I OWNED BY %s.%I;', n.nspname, c.relname, d.refobjid::regclass, a.attname)
                                         FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                                         WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')), '')
                   || coalesce(E'\\n' || (\(grants(acl: "c.relacl", owner: "c.relowner", on: "format('SEQUENCE %I.%I', n.nspname, c.relname)"))), '')
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_sequence s ON s.seqrelid = c.oid
            WHERE \(ownSchemas) AND c.relkind = 'S'
            UNION ALL
            SELECT 4, r.rolname,
                   format('CREATE ROLE %I%s%s%s;', r.rolname, CASE WHEN r.rolcanlogin THEN ' LOGIN' ELSE ' NOLOGIN' END,
                          CASE WHEN r.rolbypassrls THEN ' BYPASSRLS' ELSE '' END, CASE WHEN r.rolinherit THEN '' ELSE ' NOINHERIT' END)
            FROM pg_roles r WHERE r.rolname IN ('habitsync_app', 'habitsync_analyst')
            ORDER BY 1, 2
            """)

    // MARK: - Rendering

    static func tables(_ connection: PGConnection) async throws -> [(String, String)] {
        try await connection.query(tableQuery).rows.map { row in
            let qualified = try row.decode("qualified", as: String.self)
            var text = header(qualified, comment: try row.decodeIfPresent("comment", as: String.self))
            var create = "CREATE TABLE \(qualified) (\n\(try row.decodeIfPresent("columns", as: String.self) ?? "")\n)"
            if try row.decode("partitioned", as: Bool.self), let key = try row.decodeIfPresent("partition_key", as: String.self) {
                create += " PARTITION BY \(key)"
            }
            text += create + ";\n"
            if let parent = try row.decodeIfPresent("parent", as: String.self) {
                text += "ALTER TABLE \(parent) ATTACH PARTITION \(qualified) \(try row.decodeIfPresent("bound", as: String.self) ?? "");\n"
            }
            if try row.decode("rls", as: Bool.self) { text += "ALTER TABLE \(qualified) ENABLE ROW LEVEL SECURITY;\n" }
            if try row.decode("forced", as: Bool.self) { text += "ALTER TABLE \(qualified) FORCE ROW LEVEL SECURITY;\n" }
            for (title, column) in [
                ("Constraints", "constraints"), ("Indexes", "indexes"), ("Triggers", "triggers"),
                ("Policies", "policies"), ("Privileges", "privileges"),
            ] {
                if let section = try row.decodeIfPresent(column, as: String.self) { text += "\n-- \(title)\n\(section)\n" }
            }
            return (path("tables", try row.decode("schema", as: String.self), try row.decode("name", as: String.self)), text)
        }
    }

    static func views(_ connection: PGConnection) async throws -> [(String, String)] {
        try await connection.query(viewQuery).rows.map { row in
            let qualified = try row.decode("qualified", as: String.self)
            let kind = try row.decode("materialized", as: Bool.self) ? "MATERIALIZED VIEW" : "VIEW"
            var text = header(qualified, comment: try row.decodeIfPresent("comment", as: String.self))
            text += "CREATE \(kind) \(qualified) AS\n\(try row.decode("definition", as: String.self))\n"
            for column in ["column_comments", "privileges"] {
                if let section = try row.decodeIfPresent(column, as: String.self) { text += "\n\(section)\n" }
            }
            return (path("views", try row.decode("schema", as: String.self), try row.decode("name", as: String.self)), text)
        }
    }

    /// Overloads share one file, in the order of their arguments.
    static func functions(_ connection: PGConnection) async throws -> [(String, String)] {
        var files: [String: String] = [:]
        var order: [String] = []
        for row in try await connection.query(functionQuery).rows {
            let schema = try row.decode("schema", as: String.self)
            let name = try row.decode("name", as: String.self)
            let file = path("functions", schema, name)
            let signature = "\(schema).\(name)(\(try row.decode("arguments", as: String.self)))"
            var text = header(signature, comment: try row.decodeIfPresent("comment", as: String.self))
            text += try row.decode("definition", as: String.self).trimmingCharacters(in: .newlines) + "\n"
            if try row.decode("default_privileges", as: Bool.self) {
                text += "\n-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)\n"
            } else {
                text += "\n-- Privileges\n\(try row.decodeIfPresent("privileges", as: String.self) ?? "-- none but the owner's")\n"
            }
            if let earlier = files[file] {
                files[file] = earlier + "\n" + text
            } else {
                order.append(file)
                files[file] = text
            }
        }
        return order.map { ($0, files[$0] ?? "") }
    }

    static func schemas(_ connection: PGConnection) async throws -> String {
        let titles = [1: "Schemas", 2: "Extensions", 3: "Sequences", 4: "Roles (cluster-wide; the migrations create them when missing)"]
        var text = "-- Schemas, extensions, sequences and roles the migrations create\n"
        var part = 0
        for row in try await connection.query(schemaQuery).rows {
            let next = try row.decode("part", as: Int.self)
            if next != part {
                text += "\n-- \(titles[next] ?? "")\n"
                part = next
            }
            text += try row.decode("text", as: String.self) + "\n"
        }
        return text
    }

    static func header(_ name: String, comment: String?) -> String {
        var text = "-- \(name)\n"
        if let comment {
            text += comment.split(separator: "\n", omittingEmptySubsequences: false).map { "-- \($0)" }.joined(separator: "\n") + "\n"
        }
        return text + "\n"
    }

    static func path(_ folder: String, _ schema: String, _ name: String) -> String {
        "\(folder)/\(schema).\(name).sql"
    }
}
