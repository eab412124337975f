package com.example.edge;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import org.junit.Ignore;
import org.junit.Test;

public class OutcomesTest {
    private static int flakyCalls;
    private static int flakyErrorCalls;
    private static int alwaysCalls;

    @Test
    public void passes() {
        assertTrue(true);
    }

    @Test
    public void fails() {
        assertEquals("expected <b>4</b> | `x`", "got <script>alert(1)</script> ]]> end");
    }

    @Test
    public void errors() {
        throw new IllegalStateException("not an assertion: JUnit 4 calls this an error");
    }

    @Ignore("ignored with a reason")
    @Test
    public void ignored() {}

    @Test
    public void assumptionFails() {
        assumeTrue("needs a GPU", false);
    }

    /** Fails once, passes on Surefire's rerun (rerunFailingTestsCount): a flakyFailure. */
    @Test
    public void flakyFailure() {
        flakyCalls++;
        assertTrue("attempt " + flakyCalls, flakyCalls > 1);
    }

    /** Throws once, passes on the rerun: a flakyError. */
    @Test
    public void flakyError() {
        flakyErrorCalls++;
        if (flakyErrorCalls == 1) {
            throw new IllegalStateException("first attempt throws");
        }
    }

    /** Fails on every attempt: a failure plus rerunFailure elements. */
    @Test
    public void alwaysFails() {
        alwaysCalls++;
        assertEquals("never", "attempt " + alwaysCalls);
    }

    @Test
    public void ünïcödé_日本語() {
        assertTrue(true);
    }

    @Test
    public void noisy() {
        printALot();
    }

    /** Surefire keeps a test's output in the XML only when the test fails. */
    @Test
    public void noisyAndFails() {
        printALot();
        assertEquals("output above", 1, 2);
    }

    private static void printALot() {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            out.append("line ").append(i).append(": ").append("x".repeat(60)).append('\n');
        }
        System.out.print(out);
        System.err.println("one line on stderr");
    }
}
