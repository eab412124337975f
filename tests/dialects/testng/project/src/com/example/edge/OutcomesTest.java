package com.example.edge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertNotEquals;

import org.testng.IRetryAnalyzer;
import org.testng.ITestResult;
import org.testng.SkipException;
import org.testng.annotations.DataProvider;
import org.testng.annotations.Test;

public class OutcomesTest {
    private static int flakyCalls;

    /** Retries a failed test once. */
    public static class RetryOnce implements IRetryAnalyzer {
        private int retries;

        @Override
        public boolean retry(ITestResult result) {
            return retries++ < 1;
        }
    }

    @Test
    public void passes() {}

    @Test
    public void fails() {
        assertEquals("got <script>alert(1)</script> ]]> end", "expected <b>4</b> | `x`");
    }

    @Test
    public void errors() {
        throw new IllegalStateException("not an assertion");
    }

    @Test(enabled = false)
    public void disabled() {}

    @Test
    public void skipsItself() {
        throw new SkipException("needs a GPU");
    }

    @Test
    public void setupFor() {
        throw new IllegalStateException("a dependency fails");
    }

    @Test(dependsOnMethods = "setupFor")
    public void dependsOnFailure() {}

    @Test(retryAnalyzer = RetryOnce.class)
    public void flaky() {
        flakyCalls++;
        assertEquals(flakyCalls, 2, "attempt " + flakyCalls);
    }

    @Test(retryAnalyzer = RetryOnce.class)
    public void alwaysFails() {
        assertEquals(1, 2);
    }

    @DataProvider
    public Object[][] names() {
        return new Object[][] {{"a|b"}, {"<script>alert(1)</script>"}, {"ünïcödé ✓ 日本語"}, {"a::b"}, {"dup"}, {"dup"}};
    }

    @Test(dataProvider = "names")
    public void params(String text) {
        assertNotEquals(text, "a::b", "the a::b case fails");
    }

    @Test(invocationCount = 2)
    public void invokedTwice() {}

    @Test
    public void noisy() {
        for (int i = 0; i < 1000; i++) {
            System.out.println("line " + i + ": " + "x".repeat(60));
        }
    }
}
