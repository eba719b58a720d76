// Closed-loop load through pgjdbc (org.postgresql:postgresql) with its DEFAULT statement caching, for lockscope's
// driver tests.
//
// What pgjdbc sends by default (preferQueryMode=extended, prepareThreshold=5, preparedStatementCacheQueries=256):
// always the extended protocol. A PreparedStatement's SQL is a cached query of the connection (the cache outlives
// the PreparedStatement object, so closing and re-preparing it in a loop, as app code does, keeps the count):
// executions 1-4 of it are Parse/Bind/Execute of the UNNAMED statement (planned every time); the 5th execution
// parses it as a NAMED server-side statement ("S_1", ...) and every later execution is Bind/Execute of that named
// statement, which the server's plan cache then plans custom for its executions 1-5 and generic from the 6th.
//
// Usage: java -cp CLASSES:LIB/* Main HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]
//   HOST is a Unix socket directory (reached through junixsocket's socket factory, pgjdbc's documented way: pgjdbc
//   itself speaks TCP only) or an address; no password. SQL uses $1..$n, turned into JDBC's ? here (a $n inside a
//   string literal is not told apart). TYPE is int (setInt, setLong beyond int) or text (setString). The loop runs
//   SECONDS, or less if standard input ends first (its end-of-file stops the load). Prints one JSON line:
//   {"driver","version","calls","errors","seconds"}.

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class Main {
    private static void fail(String message) {
        System.err.println("pgjdbc-load: " + message);
        System.exit(2);
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length < 7) {
            fail("usage: Main HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]");
        }
        String host = argv[0], port = argv[1], user = argv[2], dbname = argv[3];
        int clients = Integer.parseInt(argv[4]);
        double seconds = Double.parseDouble(argv[5]);

        // $n -> ?, remembering which parameter each ? takes
        List<Integer> order = new ArrayList<>();
        Matcher m = Pattern.compile("\\$(\\d+)").matcher(argv[6]);
        StringBuilder sql = new StringBuilder();
        while (m.find()) {
            order.add(Integer.parseInt(m.group(1)) - 1);
            m.appendReplacement(sql, "?");
        }
        m.appendTail(sql);
        Object[] params = new Object[argv.length - 7];
        for (int i = 7; i < argv.length; i++) {
            String p = argv[i];
            if (p.startsWith("int:")) {
                long n = Long.parseLong(p.substring(4));
                params[i - 7] = (n == (int) n) ? (Object) (int) n : (Object) n;
            } else if (p.startsWith("text:")) {
                params[i - 7] = p.substring(5);
            } else {
                fail("parameter " + p + " is not int:N or text:S");
            }
        }

        Properties props = new Properties();
        props.setProperty("user", user);
        String address = host;
        if (host.startsWith("/")) {
            props.setProperty("socketFactory", "org.newsclub.net.unix.AFUNIXSocketFactory$FactoryArg");
            props.setProperty("socketFactoryArg", host + "/.s.PGSQL." + port);
            address = "localhost";
        }
        String url = "jdbc:postgresql://" + address + ":" + port + "/" + dbname;
        List<Connection> conns = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            conns.add(DriverManager.getConnection(url, props));
        }
        String version = conns.get(0).getMetaData().getDriverVersion();

        AtomicLong calls = new AtomicLong(), errors = new AtomicLong();
        AtomicBoolean reported = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        Thread input = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                }
            } catch (IOException e) {
                // an unreadable standard input ends it as well
            }
            stop.set(true);
        });
        input.setDaemon(true);
        input.start();
        long start = System.nanoTime();
        long deadline = start + (long) (seconds * 1e9);
        List<Thread> threads = new ArrayList<>();
        for (Connection conn : conns) {
            Thread t = new Thread(() -> {
                while (System.nanoTime() < deadline && !stop.get()) {
                    try (PreparedStatement ps = conn.prepareStatement(sql.toString())) {
                        for (int i = 0; i < order.size(); i++) {
                            ps.setObject(i + 1, params[order.get(i)]);
                        }
                        if (ps.execute()) {
                            try (ResultSet rs = ps.getResultSet()) {
                                while (rs.next()) {
                                }
                            }
                        }
                        calls.incrementAndGet();
                    } catch (SQLException e) {
                        errors.incrementAndGet();
                        if (reported.compareAndSet(false, true)) {
                            System.err.println("pgjdbc-load: first error: " + e);
                        }
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        for (Connection conn : conns) {
            conn.close();
        }
        System.out.printf("{\"driver\": \"pgjdbc\", \"version\": \"%s\", \"calls\": %d, \"errors\": %d, \"seconds\": %s}%n",
                version, calls.get(), errors.get(), Double.toString(elapsed));
    }
}
