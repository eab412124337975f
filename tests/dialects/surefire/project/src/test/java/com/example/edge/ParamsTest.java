package com.example.edge;

import static org.junit.Assert.assertNotEquals;

import java.util.Arrays;
import java.util.Collection;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/** Parameterized names with odd characters, and two parameters with the same name. */
@RunWith(Parameterized.class)
public class ParamsTest {
    @Parameters(name = "{index}: {0}")
    public static Collection<Object[]> data() {
        return Arrays.asList(new Object[][] {
            {"a|b"}, {"`tick`"}, {"<script>alert(1)</script>"}, {"ünïcödé ✓ 日本語"}, {"a::b"}, {"dup"}, {"dup"},
        });
    }

    private final String text;

    public ParamsTest(String text) {
        this.text = text;
    }

    @Test
    public void check() {
        assertNotEquals("the a::b case fails", "a::b", text);
    }
}
